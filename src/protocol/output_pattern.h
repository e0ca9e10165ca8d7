// A job's --output and --error file names, with Slurm's patterns:
//
//   %j  the job id          %x  the job name        %u  the user
//   %A  the array's job id  %a  the array index     %N  the node
//   %t  the task's rank     %%  a percent sign
//
// (outside an array, %A is the job id and %a is 4294967294, as Slurm prints
// for "no array index"). The server checks a pattern at submit; the agent
// expands it for each task, relative to the task's working directory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace berth::protocol {

struct OutputNames {
  int64_t job = 0;
  std::string name;
  std::string user;
  std::optional<int64_t> array_job;
  std::optional<int32_t> array_index;
  std::string node;
  int32_t task = 0;
};

// InvalidArgument naming `field` for a pattern no task could expand: an
// unknown %-escape, a trailing %, a NUL byte. Empty is fine (none asked).
Status CheckOutputPattern(std::string_view pattern, std::string_view field);

// The file name of `pattern` for one task (CheckOutputPattern holds).
std::string ExpandOutputPattern(std::string_view pattern, const OutputNames& names);

}  // namespace berth::protocol

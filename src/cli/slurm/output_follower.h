// srun's output: the bytes of several logs (a step's tasks, or a job's
// tasks) read through the server's logs API from where each left off, and
// written to stdout as they come, whole lines labelled with their task's
// rank ("0: ") when srun was given -l.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/api_client.h"

namespace berth::cli::slurm {

class OutputFollower {
 public:
  OutputFollower(const ApiClient& client, bool label) : client_(client), label_(label) {}

  // A log: the logs API path up to its offset ("/api/v1/jobs/7/logs?task=0&offset=").
  void Add(int32_t rank, std::string path);
  // Fetches what is new of every log and prints it. True when every log
  // said it is complete (its task is no longer running) and had nothing new.
  bool Pump();
  // Prints what is left of unfinished lines.
  void Flush();

 private:
  struct Source {
    int32_t rank = 0;
    std::string path;
    int64_t offset = 0;
    std::string partial;  // a line not yet ended (labelled output only)
  };

  void Print(Source& source, const std::string& bytes);

  const ApiClient& client_;
  const bool label_;
  std::vector<Source> sources_;
};

}  // namespace berth::cli::slurm

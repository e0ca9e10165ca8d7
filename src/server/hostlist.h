// Slurm's hostlist expressions, as `--nodelist` and `--exclude` take them:
// "gpu[01-04,07],login1" is gpu01, gpu02, gpu03, gpu04, gpu07 and login1.
//
//   list    := entry (',' entry)*
//   entry   := (text | '[' ranges ']')+          several groups multiply out:
//                                                "r[1-2]n[1-2]" is r1n1 r1n2 r2n1 r2n2
//   ranges  := range (',' range)*
//   range   := number | number '-' number        zero padding is kept: "01-03"
//
// Names keep their order of first appearance; repeats are dropped. Pure.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace berth::server {

// The names, or InvalidArgument starting with `field` and naming what is
// wrong ("nodelist: unclosed '[' in 'gpu[01-04'"). More than `max_names`
// names (after expansion) is an error too, so "n[0-999999999]" costs nothing.
Result<std::vector<std::string>> ExpandHostlist(std::string_view text, std::string_view field,
                                                size_t max_names);

}  // namespace berth::server

// Readers for the Alibaba PAI GPU cluster trace v2023 ("openb", used by the
// FGD paper, Weng et al., USENIX ATC'23): a pod list and a node list. The
// trace has no run times that a replay could use; it is for packing
// experiments (packing.h).
//
// Pod list (openb_pod_list_*.csv), columns bound by header name:
//   name, cpu_milli, memory_mib, num_gpu, gpu_milli   required
//   gpu_spec                                          optional: the GPU model
//                                                     the pod needs, empty = any
//   qos, pod_phase, creation_time, deletion_time,     optional, not used
//   scheduled_time
// Node list (openb_node_list_*.csv): sn, cpu_milli, memory_mib, gpu, model,
// all required.
//
// Text rules are trace.h's: the header is line 1 (a UTF-8 byte order mark is
// ignored); an unknown, duplicate or missing required column fails the read
// with InvalidArgument naming it; lines end in "\n" or "\r\n"; blank lines
// are not rows; fields are split at every comma and trimmed of spaces and
// tabs; a row with a double quote is a bad row ("quoted field"). Files are
// plain text (these lists are small); gzip is refused with a message.
//
// Field rules. Numbers are whole decimal numbers >= 0 without sign or point.
//   pods:  num_gpu <= 64 (a node holds at most 64 GPUs); gpu_milli, the share
//          of one GPU x 1000, is 0 when num_gpu is 0, 1..1000 when num_gpu is
//          1 and 1000 when num_gpu > 1 (a share spans one device); gpu_spec
//          is one model name (lists such as "A|B" are not supported).
//   nodes: gpu <= 64; model is required when gpu > 0; sn is unique.
// Bad rows are never dropped silently: each is counted under its reason
// ("bad <column>", "wrong column count", "quoted field", "duplicate sn"), and
// the first few are kept as "file:line: message". With `strict`, the first
// bad row fails the read with that message instead.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "core/node.h"
#include "core/resources.h"

namespace berth::sim {

struct Pai2023Pod {
  int64_t line = 0;  // 1-based line in the file; the header is line 1
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int32_t num_gpu = 0;
  int64_t gpu_milli = 0;
  std::string gpu_spec;  // empty: any model
};

struct Pai2023Node {
  int64_t line = 0;
  std::string sn;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int32_t gpus = 0;
  std::string model;  // empty when gpus == 0
};

// What a read produced: the good rows in file order and an account of the
// others. Every data row read is an item or counted in `skipped`.
template <typename Item>
struct Pai2023Load {
  std::vector<Item> items;
  int64_t rows = 0;  // data rows read (header and blank lines excluded)
  std::map<std::string, int64_t> skipped;
  std::vector<std::string> examples;  // the first bad rows, "path:line: message"
};

struct Pai2023ReadOptions {
  bool strict = false;
  size_t max_examples = 10;
};

// Fail with NotFound when the file cannot be opened and InvalidArgument when
// its header is not the list's (or, with strict, on the first bad row).
Result<Pai2023Load<Pai2023Pod>> ReadPai2023Pods(const std::string& path,
                                                const Pai2023ReadOptions& options = {});
Result<Pai2023Load<Pai2023Node>> ReadPai2023Nodes(const std::string& path,
                                                  const Pai2023ReadOptions& options = {});

// One task of the pod's request: num_gpu whole GPUs, a share of one GPU when
// num_gpu is 1 and gpu_milli < 1000, or no GPU.
core::TaskShape ToTaskShape(const Pai2023Pod& pod);
// The node with its GPUs (model as the GPU type, one interconnect group),
// CPU and memory.
core::NodeSpec ToNodeSpec(const Pai2023Node& node);

}  // namespace berth::sim

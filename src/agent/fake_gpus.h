// A simulated GPU inventory from `--fake-gpus 8xH100-80GB` and
// `--fake-topology G`, for development and tests on machines without GPUs.
// The devices do nothing; tasks still get CUDA_VISIBLE_DEVICES for the
// indices they were given, so the scheduler's choices can be checked.
// `--fake-gpu-devices PATH,...` names a device file per GPU (stand-in
// device nodes made with mknod), so device isolation can be checked too.
#pragma once

#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "agent/gpu_inventory.h"

namespace berth::agent {

struct FakeGpuSpec {
  int32_t count = 0;
  std::string model;                           // "H100-80GB": also the gpu_type jobs ask for
  int64_t memory_mib = 0;                      // from a trailing "-<N>GB", else 0
  int32_t groups = 1;                          // interconnect groups, contiguous blocks of indices
  std::vector<std::string> device_paths = {};  // empty, or one per GPU, in index order
};

// Parses COUNTxMODEL (count 1..64; the model letters, digits, '.', '_' and
// '-'), and the number of interconnect groups (1..count, dividing count).
// InvalidArgument names the flag and the value.
Result<FakeGpuSpec> ParseFakeGpus(const std::string& text, int32_t groups = 1);
// Comma-separated device files, one per GPU of `spec` (empty text: none).
Result<std::vector<std::string>> ParseFakeGpuDevices(const std::string& text,
                                                     const FakeGpuSpec& spec);

// Thread-safe.
class FakeGpuInventory final : public GpuInventory {
 public:
  explicit FakeGpuInventory(FakeGpuSpec spec) : spec_(std::move(spec)) {}

  Result<GpuInventoryInfo> Discover() override;
  Result<std::vector<GpuSample>> Sample() override;

  // Tests: mark a device failed (or repaired); the next sample shows it.
  void SetHealthy(int32_t index, bool healthy);

 private:
  const FakeGpuSpec spec_;
  std::mutex mutex_;
  std::set<int32_t> unhealthy_;
};

}  // namespace berth::agent

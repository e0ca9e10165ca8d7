// GpuInventory: what the agent knows about its node's GPUs. Two
// implementations sit behind it: NVML loaded at run time (nvml_inventory.h),
// so one binary runs with and without the NVIDIA driver, and a simulated
// inventory for development and tests (fake_gpus.h).
//
// Discover() runs once at start (the node's shape is fixed while the agent
// runs: the server refuses a re-registration with a different inventory);
// Sample() runs on every heartbeat for health and the metrics page.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace berth::agent {

struct GpuInfo {
  int32_t index = 0;  // the device index CUDA_VISIBLE_DEVICES names
  std::string uuid;
  std::string name;  // as the driver reports it, e.g. "NVIDIA H100 80GB HBM3"
  int64_t memory_mib = 0;
  // GPUs in one group talk fast to each other (NVLink, or one PCIe switch).
  int32_t interconnect_group = 0;
  bool healthy = true;
  // The device file a process opens to use this GPU ("/dev/nvidia3"); the
  // agent denies it to tasks that were not given this GPU. Empty: none
  // known (fake GPUs without --fake-gpu-devices).
  std::string device_path = "";
};

struct GpuInventoryInfo {
  // The model jobs ask for with gpu_type (e.g. "H100-80GB"); empty without GPUs.
  std::string gpu_type;
  std::vector<GpuInfo> gpus;  // gpus[i].index == i
  std::string driver;         // driver and library versions, for the log
};

struct GpuSample {
  int32_t index = 0;
  bool healthy = true;
  std::string health_detail;  // why not healthy ("uncorrected ECC errors: 2")
  int32_t utilization_percent = 0;
  int64_t memory_used_mib = 0;
  int64_t memory_total_mib = 0;
};

// Thread safety: an implementation may be called from one thread at a time
// (the agent's loop); the agent caches samples for other readers.
class GpuInventory {
 public:
  virtual ~GpuInventory() = default;
  virtual Result<GpuInventoryInfo> Discover() = 0;
  // One sample per discovered GPU, in index order.
  virtual Result<std::vector<GpuSample>> Sample() = 0;
};

}  // namespace berth::agent

// GPUs as NVML reports them, with libnvidia-ml loaded at run time by
// dlopen, so one agent binary runs on machines with and without the NVIDIA
// driver (it links nothing of NVIDIA's).
//
// What it reads: the device count, each device's name, UUID and memory;
// NVLink peers (nvmlDeviceGetP2PStatus), or the PCIe tree where there is no
// NVLink (nvmlDeviceGetTopologyCommonAncestor), for interconnect groups;
// health from uncorrected volatile ECC errors and critical XID events; and
// utilization and memory use on every sample. Everything past the required
// entry points is optional: a library or device without it is reported with
// less detail, never refused.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agent/gpu_inventory.h"
#include "agent/nvml_api.h"

namespace berth::agent {

struct NvmlOptions {
  // A file name (searched as the dynamic loader does) or a path.
  std::string library = "libnvidia-ml.so.1";
  // The gpu_type to register; empty derives it from the first device
  // (GpuTypeFromName).
  std::string gpu_type;
};

// "NVIDIA H100 80GB HBM3" -> "H100-80GB"; "NVIDIA A100-SXM4-80GB" ->
// "A100-SXM4-80GB"; "NVIDIA H200" with 143771 MiB -> "H200-140GB" (GiB,
// rounded): the model, then its memory unless the model already names it.
std::string GpuTypeFromName(const std::string& name, int64_t memory_mib);

// XIDs that mean the application did something wrong, not the GPU (the
// list the Kubernetes device plugin skips): they do not mark a GPU unhealthy.
bool IsApplicationXid(unsigned long long xid);

// Not thread-safe (GpuInventory's contract: one caller at a time).
class NvmlInventory final : public GpuInventory {
 public:
  // Loads the library, resolves the entry points and calls nvmlInit.
  // Unavailable when the library cannot be loaded or NVML does not start
  // (with NVML's own message); Internal naming the symbol when a required
  // entry point is missing.
  static Result<std::unique_ptr<NvmlInventory>> Open(const NvmlOptions& options);
  ~NvmlInventory() override;
  NvmlInventory(const NvmlInventory&) = delete;
  NvmlInventory& operator=(const NvmlInventory&) = delete;

  Result<GpuInventoryInfo> Discover() override;
  Result<std::vector<GpuSample>> Sample() override;

 private:
  struct Api {
    nvmlInit_fn init = nullptr;
    nvmlShutdown_fn shutdown = nullptr;
    nvmlErrorString_fn error_string = nullptr;
    nvmlDeviceGetCount_fn get_count = nullptr;
    nvmlDeviceGetHandleByIndex_fn get_handle = nullptr;
    nvmlDeviceGetName_fn get_name = nullptr;
    nvmlDeviceGetUUID_fn get_uuid = nullptr;
    nvmlDeviceGetMemoryInfo_fn get_memory = nullptr;
    nvmlSystemGetDriverVersion_fn get_driver_version = nullptr;
    nvmlDeviceGetUtilizationRates_fn get_utilization = nullptr;
    nvmlDeviceGetMinorNumber_fn get_minor_number = nullptr;
    nvmlDeviceGetP2PStatus_fn get_p2p_status = nullptr;
    nvmlDeviceGetTopologyCommonAncestor_fn get_common_ancestor = nullptr;
    nvmlDeviceGetTotalEccErrors_fn get_ecc_errors = nullptr;
    nvmlEventSetCreate_fn event_set_create = nullptr;
    nvmlDeviceRegisterEvents_fn register_events = nullptr;
    nvmlEventSetWait_fn event_set_wait = nullptr;
    nvmlEventSetFree_fn event_set_free = nullptr;
  };

  NvmlInventory(void* library, Api api, NvmlOptions options)
      : library_(library), api_(api), options_(std::move(options)) {}
  std::string ErrorText(nvmlReturn_t code) const;
  std::vector<int32_t> InterconnectGroups() const;
  void DrainXidEvents();

  void* library_ = nullptr;
  Api api_;
  NvmlOptions options_;
  std::vector<nvmlDevice_t> devices_;  // by index, filled by Discover
  nvmlEventSet_t events_ = nullptr;
  std::map<int32_t, std::string> xid_failures_;  // sticky: a GPU that threw one stays out
};

}  // namespace berth::agent

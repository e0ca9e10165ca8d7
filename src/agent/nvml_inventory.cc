#include "agent/nvml_inventory.h"

#include <dlfcn.h>

#include <cmath>
#include <numeric>
#include <sstream>

namespace berth::agent {
namespace {

// Resolves the first of `names` the library exports.
template <typename Fn>
Fn Lookup(void* library, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (void* symbol = ::dlsym(library, name)) return reinterpret_cast<Fn>(symbol);
  }
  return nullptr;
}

std::string Trim(const char* text) {
  std::string out(text);
  while (!out.empty() && (out.back() == ' ' || out.back() == '\n')) out.pop_back();
  return out;
}

int32_t Find(std::vector<int32_t>& parent, int32_t x) {
  while (parent[static_cast<size_t>(x)] != x) {
    parent[static_cast<size_t>(x)] = parent[static_cast<size_t>(parent[static_cast<size_t>(x)])];
    x = parent[static_cast<size_t>(x)];
  }
  return x;
}

}  // namespace

std::string GpuTypeFromName(const std::string& name, int64_t memory_mib) {
  std::istringstream words(name);
  std::vector<std::string> tokens;
  for (std::string word; words >> word;) tokens.push_back(word);
  // Brand words, not the model.
  while (!tokens.empty() && (tokens.front() == "NVIDIA" || tokens.front() == "Tesla")) {
    tokens.erase(tokens.begin());
  }
  if (tokens.empty()) return "unknown";
  std::string model = tokens.front();
  if (model.find("GB") != std::string::npos) return model;
  for (size_t i = 1; i < tokens.size(); ++i) {
    const std::string& token = tokens[i];
    if (token.size() > 2 && token.substr(token.size() - 2) == "GB" &&
        token.find_first_not_of("0123456789") == token.size() - 2) {
      return model + "-" + token;
    }
  }
  if (memory_mib <= 0) return model;
  const int64_t gib = (memory_mib + 512) / 1024;
  return model + "-" + std::to_string(gib) + "GB";
}

bool IsApplicationXid(unsigned long long xid) {
  // 13: graphics engine exception, 31: memory page fault, 43: stopped
  // processing, 45: preemptive cleanup, 68: video decoder exception, 109:
  // context switch timeout: a user program's fault, not the GPU's.
  return xid == 13 || xid == 31 || xid == 43 || xid == 45 || xid == 68 || xid == 109;
}

Result<std::unique_ptr<NvmlInventory>> NvmlInventory::Open(const NvmlOptions& options) {
  ::dlerror();
  void* library = ::dlopen(options.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = ::dlerror();
    return Unavailable("NVML: cannot load " + options.library +
                       " (is the NVIDIA driver "
                       "installed?): " +
                       std::string(why ? why : "unknown error"));
  }
  Api api;
  api.init = Lookup<nvmlInit_fn>(library, {"nvmlInit_v2", "nvmlInit"});
  api.shutdown = Lookup<nvmlShutdown_fn>(library, {"nvmlShutdown"});
  api.error_string = Lookup<nvmlErrorString_fn>(library, {"nvmlErrorString"});
  api.get_count =
      Lookup<nvmlDeviceGetCount_fn>(library, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
  api.get_handle = Lookup<nvmlDeviceGetHandleByIndex_fn>(
      library, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
  api.get_name = Lookup<nvmlDeviceGetName_fn>(library, {"nvmlDeviceGetName"});
  api.get_uuid = Lookup<nvmlDeviceGetUUID_fn>(library, {"nvmlDeviceGetUUID"});
  api.get_memory = Lookup<nvmlDeviceGetMemoryInfo_fn>(library, {"nvmlDeviceGetMemoryInfo"});
  const std::pair<const char*, bool> required[] = {
      {"nvmlInit_v2", api.init != nullptr},
      {"nvmlShutdown", api.shutdown != nullptr},
      {"nvmlErrorString", api.error_string != nullptr},
      {"nvmlDeviceGetCount_v2", api.get_count != nullptr},
      {"nvmlDeviceGetHandleByIndex_v2", api.get_handle != nullptr},
      {"nvmlDeviceGetName", api.get_name != nullptr},
      {"nvmlDeviceGetUUID", api.get_uuid != nullptr},
      {"nvmlDeviceGetMemoryInfo", api.get_memory != nullptr},
  };
  for (const auto& [name, found] : required) {
    if (!found) {
      ::dlclose(library);
      return Internal("NVML: " + options.library + " does not export " + name +
                      " (a driver too old or not NVML)");
    }
  }
  api.get_driver_version =
      Lookup<nvmlSystemGetDriverVersion_fn>(library, {"nvmlSystemGetDriverVersion"});
  api.get_utilization =
      Lookup<nvmlDeviceGetUtilizationRates_fn>(library, {"nvmlDeviceGetUtilizationRates"});
  api.get_p2p_status = Lookup<nvmlDeviceGetP2PStatus_fn>(library, {"nvmlDeviceGetP2PStatus"});
  api.get_minor_number = Lookup<nvmlDeviceGetMinorNumber_fn>(library, {"nvmlDeviceGetMinorNumber"});
  api.get_common_ancestor = Lookup<nvmlDeviceGetTopologyCommonAncestor_fn>(
      library, {"nvmlDeviceGetTopologyCommonAncestor"});
  api.get_ecc_errors =
      Lookup<nvmlDeviceGetTotalEccErrors_fn>(library, {"nvmlDeviceGetTotalEccErrors"});
  api.event_set_create = Lookup<nvmlEventSetCreate_fn>(library, {"nvmlEventSetCreate"});
  api.register_events = Lookup<nvmlDeviceRegisterEvents_fn>(library, {"nvmlDeviceRegisterEvents"});
  api.event_set_wait =
      Lookup<nvmlEventSetWait_fn>(library, {"nvmlEventSetWait_v2", "nvmlEventSetWait"});
  api.event_set_free = Lookup<nvmlEventSetFree_fn>(library, {"nvmlEventSetFree"});

  const nvmlReturn_t init = api.init();
  if (init != NVML_SUCCESS) {
    const std::string why = Trim(api.error_string(init));
    ::dlclose(library);
    return Unavailable("NVML: nvmlInit failed: " + why + " (code " + std::to_string(init) + ")");
  }
  return std::unique_ptr<NvmlInventory>(new NvmlInventory(library, api, options));
}

NvmlInventory::~NvmlInventory() {
  if (events_ != nullptr && api_.event_set_free != nullptr) api_.event_set_free(events_);
  api_.shutdown();
  ::dlclose(library_);
}

std::string NvmlInventory::ErrorText(nvmlReturn_t code) const {
  return Trim(api_.error_string(code)) + " (code " + std::to_string(code) + ")";
}

std::vector<int32_t> NvmlInventory::InterconnectGroups() const {
  const auto n = static_cast<int32_t>(devices_.size());
  std::vector<int32_t> parent(devices_.size());
  std::iota(parent.begin(), parent.end(), 0);
  const auto join = [&parent](int32_t a, int32_t b) {
    parent[static_cast<size_t>(Find(parent, a))] = Find(parent, b);
  };
  bool nvlink = false;
  if (api_.get_p2p_status != nullptr) {
    for (int32_t a = 0; a < n; ++a) {
      for (int32_t b = a + 1; b < n; ++b) {
        int status = -1;
        if (api_.get_p2p_status(devices_[static_cast<size_t>(a)], devices_[static_cast<size_t>(b)],
                                NVML_P2P_CAPS_INDEX_NVLINK, &status) == NVML_SUCCESS &&
            status == NVML_P2P_STATUS_OK) {
          join(a, b);
          nvlink = true;
        }
      }
    }
  }
  // Without NVLink, GPUs under one PCIe switch (or a tree of them without
  // crossing a host bridge) form a group.
  if (!nvlink && api_.get_common_ancestor != nullptr) {
    for (int32_t a = 0; a < n; ++a) {
      for (int32_t b = a + 1; b < n; ++b) {
        int level = -1;
        if (api_.get_common_ancestor(devices_[static_cast<size_t>(a)],
                                     devices_[static_cast<size_t>(b)], &level) == NVML_SUCCESS &&
            level <= NVML_TOPOLOGY_MULTIPLE) {
          join(a, b);
        }
      }
    }
  }
  // Number the groups 0.. in order of their lowest index.
  std::vector<int32_t> groups(devices_.size());
  std::map<int32_t, int32_t> numbering;
  for (int32_t i = 0; i < n; ++i) {
    const int32_t root = Find(parent, i);
    auto [it, inserted] = numbering.emplace(root, static_cast<int32_t>(numbering.size()));
    groups[static_cast<size_t>(i)] = it->second;
  }
  return groups;
}

Result<GpuInventoryInfo> NvmlInventory::Discover() {
  unsigned int count = 0;
  if (nvmlReturn_t code = api_.get_count(&count); code != NVML_SUCCESS) {
    return Unavailable("NVML: nvmlDeviceGetCount failed: " + ErrorText(code));
  }
  GpuInventoryInfo info;
  char text[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  info.driver = api_.get_driver_version != nullptr &&
                        api_.get_driver_version(text, sizeof(text)) == NVML_SUCCESS
                    ? std::string("driver ") + text
                    : "driver unknown";
  devices_.clear();
  for (unsigned int i = 0; i < count; ++i) {
    nvmlDevice_t device = nullptr;
    if (nvmlReturn_t code = api_.get_handle(i, &device); code != NVML_SUCCESS) {
      return Unavailable("NVML: no handle for GPU " + std::to_string(i) + ": " + ErrorText(code));
    }
    devices_.push_back(device);
    GpuInfo gpu;
    gpu.index = static_cast<int32_t>(i);
    char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
    if (api_.get_name(device, name, sizeof(name)) == NVML_SUCCESS) gpu.name = name;
    char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
    if (api_.get_uuid(device, uuid, sizeof(uuid)) == NVML_SUCCESS) gpu.uuid = uuid;
    nvmlMemory_t memory{};
    if (nvmlReturn_t code = api_.get_memory(device, &memory); code == NVML_SUCCESS) {
      gpu.memory_mib = static_cast<int64_t>(memory.total >> 20);
    } else if (code == NVML_ERROR_GPU_IS_LOST) {
      gpu.healthy = false;
    }
    // The driver's device file is /dev/nvidia<minor>; the minor number is
    // not always the index (NVML orders by PCI bus, the driver may not).
    unsigned int minor = i;
    if (api_.get_minor_number != nullptr) (void)api_.get_minor_number(device, &minor);
    gpu.device_path = "/dev/nvidia" + std::to_string(minor);
    info.gpus.push_back(std::move(gpu));
  }
  const std::vector<int32_t> groups = InterconnectGroups();
  for (size_t i = 0; i < info.gpus.size(); ++i) info.gpus[i].interconnect_group = groups[i];
  info.gpu_type = options_.gpu_type;
  if (info.gpu_type.empty() && !info.gpus.empty()) {
    info.gpu_type = GpuTypeFromName(info.gpus.front().name, info.gpus.front().memory_mib);
  }
  // Critical XIDs arrive as events; listen for them from now on.
  if (events_ == nullptr && api_.event_set_create != nullptr && api_.register_events != nullptr &&
      api_.event_set_wait != nullptr && api_.event_set_create(&events_) == NVML_SUCCESS) {
    for (nvmlDevice_t device : devices_) {
      // NOT_SUPPORTED on some devices: they go without XID health.
      (void)api_.register_events(device, nvmlEventTypeXidCriticalError, events_);
    }
  }
  for (const GpuInfo& gpu : info.gpus) {
    if (!gpu.healthy) xid_failures_.emplace(gpu.index, "GPU is lost");
  }
  return info;
}

void NvmlInventory::DrainXidEvents() {
  if (events_ == nullptr) return;
  // Bounded: a storm of events cannot hold the heartbeat.
  for (int i = 0; i < 1024; ++i) {
    nvmlEventData_t event{};
    if (api_.event_set_wait(events_, &event, 0) != NVML_SUCCESS) return;
    if ((event.eventType & nvmlEventTypeXidCriticalError) == 0) continue;
    if (IsApplicationXid(event.eventData)) continue;
    for (size_t index = 0; index < devices_.size(); ++index) {
      if (devices_[index] == event.device) {
        xid_failures_.emplace(static_cast<int32_t>(index),
                              "critical XID " + std::to_string(event.eventData));
      }
    }
  }
}

Result<std::vector<GpuSample>> NvmlInventory::Sample() {
  DrainXidEvents();
  std::vector<GpuSample> samples;
  for (size_t i = 0; i < devices_.size(); ++i) {
    nvmlDevice_t device = devices_[i];
    GpuSample sample;
    sample.index = static_cast<int32_t>(i);
    nvmlMemory_t memory{};
    if (nvmlReturn_t code = api_.get_memory(device, &memory); code == NVML_SUCCESS) {
      sample.memory_total_mib = static_cast<int64_t>(memory.total >> 20);
      sample.memory_used_mib = static_cast<int64_t>(memory.used >> 20);
    } else if (code == NVML_ERROR_GPU_IS_LOST) {
      xid_failures_.emplace(sample.index, "GPU is lost");
    }
    nvmlUtilization_t utilization{};
    if (api_.get_utilization != nullptr &&
        api_.get_utilization(device, &utilization) == NVML_SUCCESS) {
      sample.utilization_percent = static_cast<int32_t>(utilization.gpu);
    }
    unsigned long long ecc = 0;
    if (api_.get_ecc_errors != nullptr &&
        api_.get_ecc_errors(device, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &ecc) ==
            NVML_SUCCESS &&
        ecc > 0) {
      sample.healthy = false;
      sample.health_detail = "uncorrected ECC errors: " + std::to_string(ecc);
    }
    if (auto it = xid_failures_.find(sample.index); it != xid_failures_.end()) {
      sample.healthy = false;
      sample.health_detail += (sample.health_detail.empty() ? "" : "; ") + it->second;
    }
    samples.push_back(std::move(sample));
  }
  return samples;
}

}  // namespace berth::agent

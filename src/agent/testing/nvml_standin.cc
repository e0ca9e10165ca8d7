// A stand-in libnvidia-ml.so.1 for tests: the NVML functions the agent calls,
// over a configurable set of pretend devices, so the agent's NVML path
// (dlopen, symbol lookup, error strings, versioned names, topology, health)
// runs for real on machines without the NVIDIA driver. Built three ways
// (src/agent/CMakeLists.txt): full, legacy (pre-_v2 names, nothing
// optional) and broken (a required function missing).
//
// Configured by the environment, read at nvmlInit:
//   NVML_STANDIN_COUNT=N           devices (default 2)
//   NVML_STANDIN_NAME=TEXT         device name (default "NVIDIA H100 80GB HBM3")
//   NVML_STANDIN_MEMORY_MIB=N      memory per device (default 81559)
//   NVML_STANDIN_INIT_ERROR=CODE   nvmlInit fails with this nvmlReturn_t
//   NVML_STANDIN_NVLINK_GROUPS=G   G NVLink islands of contiguous devices
//                                  (default 1; 0: no NVLink at all)
//   NVML_STANDIN_PCIE_GROUPS=G     without NVLink: G PCIe switches (default 1)
//   NVML_STANDIN_ECC=I:N,...       device I has N uncorrected ECC errors
//   NVML_STANDIN_XID=I:X,...       one XID X event for device I, delivered once
//   NVML_STANDIN_LOST=I            device I answers GPU_IS_LOST
//   NVML_STANDIN_UTILIZATION=P     every device is P percent busy
//   NVML_STANDIN_MINOR_BASE=M      device I is /dev/nvidia<M+I> (default 0)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "agent/nvml_api.h"

#define STANDIN_EXPORT extern "C" __attribute__((visibility("default")))

struct nvmlDevice_st {
  unsigned int index;
};
struct nvmlEventSet_st {
  size_t next;
};

namespace {

constexpr unsigned int kMaxDevices = 64;

struct Config {
  bool initialized = false;
  unsigned int count = 2;
  std::string name = "NVIDIA H100 80GB HBM3";
  unsigned long long memory_mib = 81559;
  int nvlink_groups = 1;
  int pcie_groups = 1;
  std::vector<std::pair<unsigned int, unsigned long long>> ecc;
  std::vector<std::pair<unsigned int, unsigned long long>> xids;
  long lost = -1;
  unsigned int utilization = 0;
  unsigned int minor_base = 0;
};

Config& State() {
  static Config config;
  return config;
}

nvmlDevice_st* Devices() {
  static nvmlDevice_st devices[kMaxDevices];
  for (unsigned int i = 0; i < kMaxDevices; ++i) devices[i].index = i;
  return devices;
}

long EnvNumber(const char* name, long fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::strtol(value, nullptr, 10) : fallback;
}

std::vector<std::pair<unsigned int, unsigned long long>> EnvPairs(const char* name) {
  std::vector<std::pair<unsigned int, unsigned long long>> out;
  const char* value = std::getenv(name);
  if (value == nullptr) return out;
  std::string text(value);
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    const size_t colon = item.find(':');
    if (colon != std::string::npos) {
      out.emplace_back(static_cast<unsigned int>(std::strtoul(item.c_str(), nullptr, 10)),
                       std::strtoull(item.c_str() + colon + 1, nullptr, 10));
    }
    start = end + 1;
  }
  return out;
}

nvmlReturn_t CheckDevice(nvmlDevice_t device) {
  if (!State().initialized) return NVML_ERROR_UNINITIALIZED;
  if (device == nullptr || device->index >= State().count) return NVML_ERROR_INVALID_ARGUMENT;
  return NVML_SUCCESS;
}

[[maybe_unused]] int Block(unsigned int index, int groups) {
  const unsigned int count = State().count;
  if (groups <= 0) return static_cast<int>(index);
  return static_cast<int>(index * static_cast<unsigned int>(groups) / count);
}

nvmlReturn_t Init() {
  Config config;
  const long error = EnvNumber("NVML_STANDIN_INIT_ERROR", 0);
  if (error != 0) return static_cast<nvmlReturn_t>(error);
  config.count = static_cast<unsigned int>(EnvNumber("NVML_STANDIN_COUNT", 2));
  if (config.count > kMaxDevices) config.count = kMaxDevices;
  if (const char* name = std::getenv("NVML_STANDIN_NAME")) config.name = name;
  config.memory_mib = static_cast<unsigned long long>(EnvNumber("NVML_STANDIN_MEMORY_MIB", 81559));
  config.nvlink_groups = static_cast<int>(EnvNumber("NVML_STANDIN_NVLINK_GROUPS", 1));
  config.pcie_groups = static_cast<int>(EnvNumber("NVML_STANDIN_PCIE_GROUPS", 1));
  config.ecc = EnvPairs("NVML_STANDIN_ECC");
  config.xids = EnvPairs("NVML_STANDIN_XID");
  config.lost = EnvNumber("NVML_STANDIN_LOST", -1);
  config.utilization = static_cast<unsigned int>(EnvNumber("NVML_STANDIN_UTILIZATION", 0));
  config.minor_base = static_cast<unsigned int>(EnvNumber("NVML_STANDIN_MINOR_BASE", 0));
  config.initialized = true;
  State() = config;
  return NVML_SUCCESS;
}

nvmlReturn_t Count(unsigned int* count) {
  if (!State().initialized) return NVML_ERROR_UNINITIALIZED;
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *count = State().count;
  return NVML_SUCCESS;
}

nvmlReturn_t Handle(unsigned int index, nvmlDevice_t* device) {
  if (!State().initialized) return NVML_ERROR_UNINITIALIZED;
  if (device == nullptr || index >= State().count) return NVML_ERROR_INVALID_ARGUMENT;
  *device = &Devices()[index];
  return NVML_SUCCESS;
}

}  // namespace

STANDIN_EXPORT const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT:
      return "Timeout";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost";
    default:
      return "Unknown Error";
  }
}

STANDIN_EXPORT nvmlReturn_t nvmlShutdown(void) {
  if (!State().initialized) return NVML_ERROR_UNINITIALIZED;
  State().initialized = false;
  return NVML_SUCCESS;
}

STANDIN_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name,
                                              unsigned int length) {
  if (nvmlReturn_t check = CheckDevice(device); check != NVML_SUCCESS) return check;
  if (name == nullptr || State().name.size() + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(name, State().name.c_str(), State().name.size() + 1);
  return NVML_SUCCESS;
}

STANDIN_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid,
                                              unsigned int length) {
  if (nvmlReturn_t check = CheckDevice(device); check != NVML_SUCCESS) return check;
  char text[64];
  std::snprintf(text, sizeof(text), "GPU-5a4d0000-0000-4000-8000-%012u", device->index);
  if (uuid == nullptr || std::strlen(text) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(uuid, text, std::strlen(text) + 1);
  return NVML_SUCCESS;
}

#if !defined(NVML_STANDIN_BROKEN)
STANDIN_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  if (nvmlReturn_t check = CheckDevice(device); check != NVML_SUCCESS) return check;
  if (State().lost == static_cast<long>(device->index)) return NVML_ERROR_GPU_IS_LOST;
  memory->total = State().memory_mib << 20;
  memory->used = (State().memory_mib / 4) << 20;
  memory->free = memory->total - memory->used;
  return NVML_SUCCESS;
}
#endif

#if defined(NVML_STANDIN_LEGACY)

STANDIN_EXPORT nvmlReturn_t nvmlInit(void) { return Init(); }
STANDIN_EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int* count) { return Count(count); }
STANDIN_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device) {
  return Handle(index, device);
}

#else

STANDIN_EXPORT nvmlReturn_t nvmlInit_v2(void) { return Init(); }
STANDIN_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) { return Count(count); }
STANDIN_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index,
                                                          nvmlDevice_t* device) {
  return Handle(index, device);
}

STANDIN_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
  const char* text = "550.54.15-standin";
  if (version == nullptr || std::strlen(text) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(version, text, std::strlen(text) + 1);
  return NVML_SUCCESS;
}

STANDIN_EXPORT nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t device, unsigned int* minor) {
  if (nvmlReturn_t check = CheckDevice(device); check != NVML_SUCCESS) return check;
  *minor = State().minor_base + device->index;
  return NVML_SUCCESS;
}

STANDIN_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device,
                                                          nvmlUtilization_t* utilization) {
  if (nvmlReturn_t check = CheckDevice(device); check != NVML_SUCCESS) return check;
  utilization->gpu = State().utilization;
  utilization->memory = State().utilization / 2;
  return NVML_SUCCESS;
}

STANDIN_EXPORT nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t a, nvmlDevice_t b, int caps,
                                                   int* status) {
  if (nvmlReturn_t check = CheckDevice(a); check != NVML_SUCCESS) return check;
  if (nvmlReturn_t check = CheckDevice(b); check != NVML_SUCCESS) return check;
  if (caps != NVML_P2P_CAPS_INDEX_NVLINK) return NVML_ERROR_NOT_SUPPORTED;
  const int groups = State().nvlink_groups;
  *status = groups > 0 && Block(a->index, groups) == Block(b->index, groups) ? NVML_P2P_STATUS_OK
                                                                             : 5;  // not supported
  return NVML_SUCCESS;
}

STANDIN_EXPORT nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a, nvmlDevice_t b,
                                                                int* level) {
  if (nvmlReturn_t check = CheckDevice(a); check != NVML_SUCCESS) return check;
  if (nvmlReturn_t check = CheckDevice(b); check != NVML_SUCCESS) return check;
  const int groups = State().pcie_groups;
  *level = Block(a->index, groups) == Block(b->index, groups) ? NVML_TOPOLOGY_SINGLE : 50;
  return NVML_SUCCESS;
}

STANDIN_EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, int error_type,
                                                        int counter_type,
                                                        unsigned long long* count) {
  if (nvmlReturn_t check = CheckDevice(device); check != NVML_SUCCESS) return check;
  *count = 0;
  if (error_type != NVML_MEMORY_ERROR_TYPE_UNCORRECTED || counter_type != NVML_VOLATILE_ECC) {
    return NVML_SUCCESS;
  }
  for (const auto& [index, errors] : State().ecc) {
    if (index == device->index) *count = errors;
  }
  return NVML_SUCCESS;
}

STANDIN_EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  if (!State().initialized) return NVML_ERROR_UNINITIALIZED;
  *set = new nvmlEventSet_st{0};
  return NVML_SUCCESS;
}

STANDIN_EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long types,
                                                     nvmlEventSet_t set) {
  if (nvmlReturn_t check = CheckDevice(device); check != NVML_SUCCESS) return check;
  if (set == nullptr || (types & nvmlEventTypeXidCriticalError) == 0) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  return NVML_SUCCESS;
}

STANDIN_EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data,
                                                unsigned int timeout_ms) {
  (void)timeout_ms;  // events are all there from the start: never waits
  if (!State().initialized) return NVML_ERROR_UNINITIALIZED;
  if (set->next >= State().xids.size()) return NVML_ERROR_TIMEOUT;
  const auto& [index, xid] = State().xids[set->next++];
  *data = nvmlEventData_t{&Devices()[index], nvmlEventTypeXidCriticalError, xid, 0, 0};
  return NVML_SUCCESS;
}

STANDIN_EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  delete set;
  return NVML_SUCCESS;
}

#endif

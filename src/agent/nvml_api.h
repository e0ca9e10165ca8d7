// The part of the NVML C API the agent calls, declared here because no NVIDIA
// headers are installed where Berth is built. Types and values follow
// nvml.h; only their sizes and numbers matter across the dlopen boundary.
// The in-tree stand-in library (testing/nvml_standin.cc) implements the
// same declarations.
#pragma once

typedef int nvmlReturn_t;
inline constexpr nvmlReturn_t NVML_SUCCESS = 0;
inline constexpr nvmlReturn_t NVML_ERROR_UNINITIALIZED = 1;
inline constexpr nvmlReturn_t NVML_ERROR_INVALID_ARGUMENT = 2;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
inline constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
inline constexpr nvmlReturn_t NVML_ERROR_DRIVER_NOT_LOADED = 9;
inline constexpr nvmlReturn_t NVML_ERROR_TIMEOUT = 10;
inline constexpr nvmlReturn_t NVML_ERROR_GPU_IS_LOST = 15;
inline constexpr nvmlReturn_t NVML_ERROR_UNKNOWN = 999;

typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct nvmlEventSet_st* nvmlEventSet_t;

typedef struct {
  unsigned long long total;  // bytes
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

typedef struct {
  unsigned int gpu;  // percent of time a kernel ran over the last sample period
  unsigned int memory;
} nvmlUtilization_t;

typedef struct {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;  // the XID for XID events
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlEventData_t;

// nvmlGpuP2PCapsIndex_t / nvmlGpuP2PStatus_t
inline constexpr int NVML_P2P_CAPS_INDEX_NVLINK = 2;
inline constexpr int NVML_P2P_STATUS_OK = 0;
// nvmlGpuTopologyLevel_t: how far apart two GPUs sit on the PCIe tree.
inline constexpr int NVML_TOPOLOGY_INTERNAL = 0;
inline constexpr int NVML_TOPOLOGY_SINGLE = 10;    // one PCIe switch
inline constexpr int NVML_TOPOLOGY_MULTIPLE = 20;  // several switches, no host bridge
inline constexpr int NVML_TOPOLOGY_HOSTBRIDGE = 30;
// nvmlMemoryErrorType_t / nvmlEccCounterType_t
inline constexpr int NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1;
inline constexpr int NVML_VOLATILE_ECC = 0;
inline constexpr unsigned long long nvmlEventTypeXidCriticalError = 0x8ULL;

inline constexpr unsigned int NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96;
inline constexpr unsigned int NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96;
inline constexpr unsigned int NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80;

extern "C" {

// Required entry points. The _v2 names are looked up first and the original
// names after them (drivers before 2015 export only those).
typedef nvmlReturn_t (*nvmlInit_fn)(void);
typedef nvmlReturn_t (*nvmlShutdown_fn)(void);
typedef const char* (*nvmlErrorString_fn)(nvmlReturn_t);
typedef nvmlReturn_t (*nvmlDeviceGetCount_fn)(unsigned int*);
typedef nvmlReturn_t (*nvmlDeviceGetHandleByIndex_fn)(unsigned int, nvmlDevice_t*);
typedef nvmlReturn_t (*nvmlDeviceGetName_fn)(nvmlDevice_t, char*, unsigned int);
typedef nvmlReturn_t (*nvmlDeviceGetUUID_fn)(nvmlDevice_t, char*, unsigned int);
typedef nvmlReturn_t (*nvmlDeviceGetMemoryInfo_fn)(nvmlDevice_t, nvmlMemory_t*);
// Optional: a driver or device without them still works, with less detail.
typedef nvmlReturn_t (*nvmlSystemGetDriverVersion_fn)(char*, unsigned int);
typedef nvmlReturn_t (*nvmlDeviceGetUtilizationRates_fn)(nvmlDevice_t, nvmlUtilization_t*);
typedef nvmlReturn_t (*nvmlDeviceGetP2PStatus_fn)(nvmlDevice_t, nvmlDevice_t, int, int*);
typedef nvmlReturn_t (*nvmlDeviceGetTopologyCommonAncestor_fn)(nvmlDevice_t, nvmlDevice_t, int*);
typedef nvmlReturn_t (*nvmlDeviceGetTotalEccErrors_fn)(nvmlDevice_t, int, int, unsigned long long*);
typedef nvmlReturn_t (*nvmlEventSetCreate_fn)(nvmlEventSet_t*);
typedef nvmlReturn_t (*nvmlDeviceRegisterEvents_fn)(nvmlDevice_t, unsigned long long,
                                                    nvmlEventSet_t);
typedef nvmlReturn_t (*nvmlEventSetWait_fn)(nvmlEventSet_t, nvmlEventData_t*, unsigned int);
typedef nvmlReturn_t (*nvmlEventSetFree_fn)(nvmlEventSet_t);
typedef nvmlReturn_t (*nvmlDeviceGetMinorNumber_fn)(nvmlDevice_t, unsigned int*);

}  // extern "C"

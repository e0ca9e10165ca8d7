#include "agent/fake_gpus.h"

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "core/node.h"

namespace berth::agent {
namespace {

bool ModelChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

// "H100-80GB" -> 80 GiB in MiB; 0 when the model names no memory size.
int64_t MemoryFromModel(const std::string& model) {
  if (model.size() < 3 || model.substr(model.size() - 2) != "GB") return 0;
  const size_t end = model.size() - 2;
  size_t begin = end;
  while (begin > 0 && model[begin - 1] >= '0' && model[begin - 1] <= '9') --begin;
  if (begin == end || begin == 0 || model[begin - 1] != '-') return 0;
  int64_t gib = 0;
  std::from_chars(model.data() + begin, model.data() + end, gib);
  return gib * 1024;
}

}  // namespace

Result<FakeGpuSpec> ParseFakeGpus(const std::string& text, int32_t groups) {
  const std::string usage =
      "--fake-gpus: expected COUNTxMODEL such as 8xH100-80GB, got '" + text + "'";
  const size_t x = text.find('x');
  if (x == std::string::npos || x == 0 || x + 1 >= text.size()) return InvalidArgument(usage);
  FakeGpuSpec spec;
  const auto [end, error] = std::from_chars(text.data(), text.data() + x, spec.count);
  if (error != std::errc() || end != text.data() + x) return InvalidArgument(usage);
  if (spec.count < 1 || spec.count > core::kMaxGpusPerNode) {
    return InvalidArgument("--fake-gpus: count must be 1.." +
                           std::to_string(core::kMaxGpusPerNode) + ", got " +
                           std::to_string(spec.count) + " in '" + text + "'");
  }
  spec.model = text.substr(x + 1);
  for (char c : spec.model) {
    if (!ModelChar(c)) {
      return InvalidArgument(
          "--fake-gpus: the model may hold letters, digits, '.', '_' and '-', "
          "got '" +
          spec.model + "'");
    }
  }
  spec.memory_mib = MemoryFromModel(spec.model);
  if (groups < 1 || groups > spec.count || spec.count % groups != 0) {
    return InvalidArgument("--fake-topology: groups must divide the " + std::to_string(spec.count) +
                           " GPUs evenly, got " + std::to_string(groups));
  }
  spec.groups = groups;
  return spec;
}

Result<std::vector<std::string>> ParseFakeGpuDevices(const std::string& text,
                                                     const FakeGpuSpec& spec) {
  std::vector<std::string> paths;
  if (text.empty()) return paths;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    paths.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  if (paths.size() != static_cast<size_t>(spec.count)) {
    return InvalidArgument("--fake-gpu-devices: expected " + std::to_string(spec.count) +
                           " comma-separated paths, one per GPU, got " +
                           std::to_string(paths.size()) + " in '" + text + "'");
  }
  for (const std::string& path : paths) {
    if (path.empty() || path.front() != '/') {
      return InvalidArgument("--fake-gpu-devices: expected absolute paths, got '" + path + "'");
    }
  }
  return paths;
}

Result<GpuInventoryInfo> FakeGpuInventory::Discover() {
  GpuInventoryInfo info;
  info.gpu_type = spec_.model;
  info.driver = "fake";
  const int32_t per_group = spec_.count / spec_.groups;
  for (int32_t i = 0; i < spec_.count; ++i) {
    GpuInfo gpu;
    gpu.index = i;
    // Stable and unique per index, shaped like NVML's.
    char uuid[64];
    std::snprintf(uuid, sizeof(uuid), "GPU-fa4e0000-0000-4000-8000-%012d", i);
    gpu.uuid = uuid;
    gpu.name = "Fake " + spec_.model;
    gpu.memory_mib = spec_.memory_mib;
    gpu.interconnect_group = i / per_group;
    if (!spec_.device_paths.empty()) gpu.device_path = spec_.device_paths[static_cast<size_t>(i)];
    info.gpus.push_back(std::move(gpu));
  }
  return info;
}

Result<std::vector<GpuSample>> FakeGpuInventory::Sample() {
  std::lock_guard lock(mutex_);
  std::vector<GpuSample> samples;
  for (int32_t i = 0; i < spec_.count; ++i) {
    GpuSample sample;
    sample.index = i;
    sample.healthy = !unhealthy_.contains(i);
    if (!sample.healthy) sample.health_detail = "marked unhealthy (fake)";
    sample.memory_total_mib = spec_.memory_mib;
    samples.push_back(std::move(sample));
  }
  return samples;
}

void FakeGpuInventory::SetHealthy(int32_t index, bool healthy) {
  std::lock_guard lock(mutex_);
  if (healthy) {
    unhealthy_.erase(index);
  } else {
    unhealthy_.insert(index);
  }
}

}  // namespace berth::agent

#include "core/default_memory.h"

#include <algorithm>

namespace berth::core {

const DefaultMemory* QueueDefaultMemory(const QuotaTree& tree, size_t queue) {
  for (size_t at : tree.Path(queue)) {
    const DefaultMemory& defaults = tree.queues()[at].default_memory;
    if (defaults.any()) return &defaults;
  }
  return nullptr;
}

std::optional<MemoryMiB> PerCpuDefaultFor(const DefaultMemory& defaults, const TaskShape& task) {
  if (defaults.per_gpu && task.gpu.value() > 0) return std::nullopt;
  return defaults.per_cpu;
}

int64_t LeastCpusOfSlurmNode(std::span<const int32_t> slurm_tasks_per_node) {
  int64_t least = 1;
  for (int32_t tasks : slurm_tasks_per_node) least = std::max<int64_t>(least, tasks);
  return least;
}

MemoryMiB DefaultTaskMemory(const DefaultMemory& defaults, const TaskShape& task,
                            int64_t least_cpus) {
  if (defaults.per_gpu && task.gpu.value() > 0) {
    // Whole MiB, rounded up: a quarter GPU of a 10 MiB default is 3 MiB.
    return MemoryMiB((task.gpu.value() * defaults.per_gpu->value() + 999) / 1000);
  }
  if (const std::optional<MemoryMiB> per_cpu = PerCpuDefaultFor(defaults, task)) {
    const int64_t cpus = std::max<int64_t>(least_cpus, (task.cpu.value() + 999) / 1000);
    return *per_cpu * cpus;
  }
  return MemoryMiB(0);
}

}  // namespace berth::core

// Integer resource quantities with the unit in the type.
//
// Accounting never uses floating point: GPUs are counted in thousandths
// (milli-GPU, so a quarter GPU share is exactly 250), CPU in millicores and
// memory in MiB. A missing dimension means zero.
#pragma once

#include <algorithm>
#include <compare>
#include <cstdint>
#include <memory>
#include <vector>

namespace berth::core {

template <typename Unit>
class Quantity {
 public:
  constexpr Quantity() = default;
  constexpr explicit Quantity(int64_t value) : value_(value) {}
  constexpr int64_t value() const { return value_; }

  constexpr auto operator<=>(const Quantity&) const = default;
  constexpr Quantity operator+(Quantity o) const { return Quantity(value_ + o.value_); }
  constexpr Quantity operator-(Quantity o) const { return Quantity(value_ - o.value_); }
  constexpr Quantity operator*(int64_t k) const { return Quantity(value_ * k); }
  constexpr Quantity& operator+=(Quantity o) {
    value_ += o.value_;
    return *this;
  }
  constexpr Quantity& operator-=(Quantity o) {
    value_ -= o.value_;
    return *this;
  }

 private:
  int64_t value_ = 0;
};

struct MilliGpuUnit {};
struct MilliCpuUnit {};
struct MebibyteUnit {};

using MilliGpu = Quantity<MilliGpuUnit>;
using MilliCpu = Quantity<MilliCpuUnit>;
using MemoryMiB = Quantity<MebibyteUnit>;

inline constexpr MilliGpu kOneGpu{1000};

constexpr MilliGpu WholeGpus(int64_t n) { return MilliGpu(n * 1000); }
constexpr MilliCpu Cores(int64_t n) { return MilliCpu(n * 1000); }

// What one task of a job asks for. A task takes either whole GPUs (gpu is a
// multiple of 1000: that many devices) or a share of one device (0 < gpu <
// 1000), never a mix: a share larger than one device is not a thing GPUs do.
struct TaskShape {
  MilliGpu gpu;
  MilliCpu cpu;
  MemoryMiB memory;

  constexpr bool wants_share() const { return gpu.value() > 0 && gpu.value() < 1000; }
  // Number of whole devices; 0 for a share or a CPU-only task.
  constexpr int whole_gpus() const {
    return gpu.value() >= 1000 ? static_cast<int>(gpu.value() / 1000) : 0;
  }
  // REQUIRES for a valid shape: gpu >= 0, and gpu < 1000 or a multiple of 1000.
  constexpr bool valid() const {
    return gpu.value() >= 0 && cpu.value() >= 0 && memory.value() >= 0 &&
           (gpu.value() < 1000 || gpu.value() % 1000 == 0);
  }
  constexpr auto operator<=>(const TaskShape&) const = default;
};

// The shapes of a gang whose tasks differ, one per task in rank order (a
// Slurm job whose nodes get unequal shares: `-N 2 --gpus=6` is 5 + 1 GPUs).
// Shared and immutable: the job, its placement and its requests point at
// one copy. Null where every task has the job's one shape.
using TaskShapes = std::shared_ptr<const std::vector<TaskShape>>;

// The shape that holds each of `shapes` (the largest in every dimension).
inline TaskShape LargestShape(const std::vector<TaskShape>& shapes) {
  TaskShape largest{};
  for (const TaskShape& shape : shapes) {
    largest.gpu = std::max(largest.gpu, shape.gpu);
    largest.cpu = std::max(largest.cpu, shape.cpu);
    largest.memory = std::max(largest.memory, shape.memory);
  }
  return largest;
}

}  // namespace berth::core

// The simple orderers. Every one ranks priority classes first (higher class
// first; traces have one class, so the reference policies are unchanged by it).
#pragma once

#include <vector>

#include "core/orderer.h"

namespace berth::core {

// Arrival order.
class FifoOrderer final : public Orderer {
 public:
  void Keys(std::span<const Job* const> jobs, const OrderContext& context,
            std::vector<OrderKey>& keys) const override;
};

// Shortest expected service first: by the whole expected run time (SJF) or
// by what is left of it (SRTF), then arrival. Service is run time, or run
// time x GPUs (GPU time, as Helios' QSSF ranks jobs).
class ShortestFirstOrderer final : public Orderer {
 public:
  enum class Measure { kTotal, kRemaining };
  enum class Service { kTime, kGpuTime };
  explicit ShortestFirstOrderer(Measure measure, Service service = Service::kTime)
      : measure_(measure), service_(service) {}
  void Keys(std::span<const Job* const> jobs, const OrderContext& context,
            std::vector<OrderKey>& keys) const override;

 private:
  Measure measure_;
  Service service_;
};

// Tiresias' discretized two-dimensional least-attained-service: a job's
// queue is the number of thresholds its attained GPU-seconds have passed;
// lower queues first, arrival order within a queue. Needs no job knowledge.
class LasOrderer final : public Orderer {
 public:
  // REQUIRES: thresholds ascending, in GPU-seconds.
  explicit LasOrderer(std::vector<double> thresholds_gpu_seconds);
  void Keys(std::span<const Job* const> jobs, const OrderContext& context,
            std::vector<OrderKey>& keys) const override;
  std::optional<Time> NextKeyChange(const OrderContext& context) const override;
  int QueueOf(double attained_gpu_seconds) const;

 private:
  std::vector<double> thresholds_;
};

}  // namespace berth::core

// What a restart costs a preempted job: time on its GPUs before it does
// useful work again (reloading the checkpoint, rebuilding the process group).
// The default is what the Helios simulator charged.
#pragma once

#include "core/resources.h"
#include "core/time.h"

namespace berth::core {

struct RestartCostModel {
  Duration one_gpu = Duration::Seconds(7);
  Duration up_to_one_node = Duration::Seconds(30);  // 2..8 GPUs
  Duration larger = Duration::Seconds(60);          // above 8 GPUs
};

inline Duration RestartCost(const RestartCostModel& model, MilliGpu gpus) {
  if (gpus.value() <= 1000) return model.one_gpu;
  if (gpus.value() <= 8000) return model.up_to_one_node;
  return model.larger;
}

}  // namespace berth::core

// ReadyFuture: a future that already holds its value, for calls that return
// a future and sometimes have nothing to wait for.
#pragma once

#include <future>
#include <utility>

namespace berth {

template <typename T>
std::shared_future<T> ReadyFuture(T value) {
  std::promise<T> ready;
  ready.set_value(std::move(value));
  return ready.get_future().share();
}

}  // namespace berth

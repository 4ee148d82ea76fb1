// For the engine's tests: a routing run whose files are written when it returns, as they are
// when the plugin reports the tables applied (Controller::on_routing_done waits for them).
#pragma once

#include <chrono>
#include <utility>

#include "core/controller.h"

namespace laas::core {

template <class... Args>
RouteOutcome routed(Controller& engine, Args&&... args) {
  RouteOutcome out = engine.route(std::forward<Args>(args)...);
  engine.wait_for_writes(std::chrono::seconds(10));
  return out;
}

}  // namespace laas::core

// For the engine's tests: a routing run whose files are written when it returns, as they are
// when the plugin reports the tables applied (Controller::on_routing_done waits for them), and
// what the tests look at that no adapter needs.
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

struct ControllerTesting {
  // Whether tenants.yaml differs from the version the last routing run looked at, without
  // claiming the change (an adapter claims it: Controller::claim_tenants_change).
  static bool tenants_changed(const Controller& engine) {
    return engine.tenants_file_.changed(engine.routed_once());
  }
};

}  // namespace laas::core

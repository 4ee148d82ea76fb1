// The shared state and the subnet manager's role (service/shared_state.cc): one tenant truth
// for a master and its standbys. The state directory may be shared by every SM host; the
// master's service holds the state's current term (StateStore::take_over) and is the only
// writer, fenced by that term; the others re-read the file when it changes, answer reads from
// it, keep their own managed partitions.conf following it and refuse changes, naming the
// master.
//
// One of the types the tenant service is made of: it works on the service's shared facts
// (service/service_state.h) under their one lock, writes the managed partitions.conf and gives
// tenants read over their P_Keys through ServiceExports, the only part it asks; the role itself
// is read from the shared model (current_role, role_json in service/service_state.h). Locking:
// every method is called with ServiceState::mu held unless it says "takes mu".
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "service/service_state.h"

namespace laas::service {

class ServiceExports;

class SharedState {
 public:
  SharedState(ServiceState& st, ServiceExports& exports) : st_(st), exports_(exports) {}

  // Without a provider the service is a master that owns its state directory (tests, offline
  // tools). The provider is called with no lock held.
  void set_role_provider(std::function<SmRole()> provider);  // takes mu
  // TenantService::take_over_if_needed and follow_shared_state say what these do. Take mu.
  std::optional<std::string> take_over_if_needed(const SmIdentity& self, bool state_expected);
  void follow();
  // Re-reads state.json when another SM changed it; true when it did.
  bool reload();
  // The managed partitions.conf of the tenants the shared state records (no topology needed).
  std::string partitions_text() const;

 private:
  ServiceState& st_;
  ServiceExports& exports_;
};

}  // namespace laas::service

// The tenant service's read views: the status summary, the allocation map (`topology`), the
// tenants as `tenant list` and `tenant show` print them, whichever SM answers, and a tenant's
// health under faults (service/views.cc). Nothing here changes state.
//
// One of the types the tenant service is made of: it reads the service's shared state
// (service/service_state.h) under its one lock, and shows the SM's role (role_json), hosts
// (HostManager), links and switches (FabricDrains) and link health (LinkMonitor) as they say.
// Locking: every method is called with
// ServiceState::mu held unless it says "takes mu" (those lock it themselves).
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "service/service_state.h"

namespace laas::service {

class FabricDrains;
class HostManager;
class LinkMonitor;

class ServiceViews {
 public:
  ServiceViews(const ServiceState& st, const HostManager& hosts, const FabricDrains& drains,
               const LinkMonitor& links)
      : st_(st), hosts_(hosts), drains_(drains), links_(links) {}

  nlohmann::json status() const;  // takes mu, after asking the SM's role without it
  nlohmann::json topology_info(const nlohmann::json& params) const;  // takes mu
  nlohmann::json tenant_list() const;                                // takes mu
  nlohmann::json tenant_get(const nlohmann::json& params) const;     // takes mu
  nlohmann::json tenant_json(const allocator::Tenant& t) const;      // a routed tenant
  // One tenant list and one tenant show for every state and every SM.
  static nlohmann::json tenant_line(const std::string& name, std::uint16_t pkey, int requested,
                                    std::size_t hosts, std::size_t links, const std::string& shape,
                                    const std::string& state, const std::string& reason);
  static nlohmann::json tenant_line(const PersistedTenant& t, const std::string& state,
                                    const std::string& reason);
  static nlohmann::json recorded_tenant_json(const PersistedTenant& t, const std::string& state,
                                             const std::string& reason);
  // An SM that is not the master answers status, tenant list and tenant show from the shared
  // state as last read (SharedState::reload first).
  nlohmann::json recorded_answer(const std::string& asked, const nlohmann::json& params,
                                 const SmRole& sm) const;
  std::string unrouted() const;  // why no tenant is routed now
  // "routed" or "degraded", and why (down hosts, faulty links, lost pairs, repairs).
  std::string health_text(const allocator::Tenant& t) const;

 private:
  nlohmann::json down_parts() const;  // parts down now
  // What keeps the state or the routing from working, as every status (master's or standby's)
  // says it.
  void add_troubles(nlohmann::json& s) const;
  nlohmann::json health_json(const allocator::Tenant& t) const;
  // A tenant's servers with each port's leaf (its rail), LID and GUID.
  nlohmann::json servers_json(const allocator::Tenant& t) const;

  const ServiceState& st_;
  const HostManager& hosts_;
  const FabricDrains& drains_;
  const LinkMonitor& links_;
};

}  // namespace laas::service

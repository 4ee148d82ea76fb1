// The tenant service's read views: the status summary, the allocation map (`topology`), the
// tenants as `tenant list` and `tenant show` print them, whichever SM answers, and a tenant's
// health under faults (service/views.cc). Nothing here changes state.
//
// One of the types the tenant service is made of: it reads the service's shared state
// (service/service_state.h) under its one lock, and shows the SM's role (SharedState), hosts
// (HostManager), links and switches (FabricDrains) and link health (ServiceMetrics) as they say.
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
class ServiceMetrics;
class SharedState;

class ServiceViews {
 public:
  ServiceViews(const ServiceState& st, const SharedState& shared, const HostManager& hosts,
               const FabricDrains& drains, const ServiceMetrics& metrics)
      : st_(st), shared_(shared), hosts_(hosts), drains_(drains), metrics_(metrics) {}

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
  std::string unrouted() const;  // why no tenant is routed now
  // "routed" or "degraded", and why (down hosts, faulty links, lost pairs, repairs).
  std::string health_text(const allocator::Tenant& t) const;
  nlohmann::json role_json(const SmRole& role) const;

 private:
  nlohmann::json down_parts() const;  // parts down now
  nlohmann::json health_json(const allocator::Tenant& t) const;
  // A tenant's servers with each port's leaf (its rail), LID and GUID.
  nlohmann::json servers_json(const allocator::Tenant& t) const;

  const ServiceState& st_;
  const SharedState& shared_;
  const HostManager& hosts_;
  const FabricDrains& drains_;
  const ServiceMetrics& metrics_;
};

}  // namespace laas::service

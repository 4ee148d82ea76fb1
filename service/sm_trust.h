// Which subnet managers are management (service/sm_trust.cc): this one, those laas.yaml lists,
// and those accepted with `laasctl sm accept` or that took the shared state over; `sm list`,
// `sm accept` and `sm forget`.
//
// One of the types the tenant service is made of: it works on the service's shared state
// (service/service_state.h) under its one lock, commits its changes through the service's
// lifecycle (ChangeCommitter) and keeps the metrics file current (ServiceMetrics). Locking: every
// method is called with ServiceState::mu held unless it says "takes mu" (those lock it
// themselves).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "service/caller.h"
#include "service/service_lifecycle.h"
#include "service/service_state.h"

namespace laas::service {

class ServiceMetrics;

class SmTrust {
 public:
  SmTrust(ServiceState& st, ChangeCommitter& lifecycle, ServiceMetrics& metrics)
      : st_(st), lifecycle_(lifecycle), metrics_(metrics) {}

  std::vector<topology::Guid> sm_ports() const;  // takes mu
  // The SMs OpenSM sees now and this one's port; returns those nobody trusts. Takes mu.
  std::vector<SmSeen> note_subnet_managers(topology::Guid self, std::vector<SmSeen> seen);
  // Who is master and every SM OpenSM knows with its SMInfo state, at every look of the
  // plugin's (not only in routing runs): logs a change of master or of its trust, counts the
  // SMs nobody trusts, keeps the metrics file current. Takes mu.
  void note_fabric_sms(const SmRole& role, std::vector<SmSeen> seen);
  bool trusted(topology::Guid guid) const;
  // The SMs seen that nobody trusts (the trust list built once).
  std::vector<SmSeen> unaccepted_sms() const;
  std::vector<topology::Guid> trusted_sm_ports() const;
  std::string sm_state(topology::Guid guid) const;  // this|listed|accepted|...
  nlohmann::json sm_list() const;                   // takes mu
  nlohmann::json sm_change(const nlohmann::json& params, const Caller& caller,
                           bool accept);  // takes mu

 private:
  ServiceState& st_;
  ChangeCommitter& lifecycle_;
  ServiceMetrics& metrics_;
};

}  // namespace laas::service

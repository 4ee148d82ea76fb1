// laasctl audit --from-switches: the tables as the switches hold them, not OpenSM's copy. The
// fabric and the LFTs are read back with infiniband-diags (ibnetdiscover, dump_fts) from this
// host, and audited by laas-audit against the allocations and the layout the plugin recorded in
// its state directory, or in etcd (`state_store: etcd`) -- the offline audit, run on the live
// fabric. A table changed behind
// OpenSM's back (a tenant's root with an SMP Set, no M_Key) is seen here and not by the audit of
// OpenSM's copy.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace laas::ctl {

struct SwitchAuditOptions {
  std::string ca;   // -C for the diagnostics (empty: the first one)
  int ca_port = 0;  // -P (0: the first active)
  // -y: the M_Key the diagnostics put in their SMPs (opensm.conf's m_key; empty: none). At
  // m_key_protection_level 2 a switch answers a Get without it with its tables hidden.
  std::string m_key;
  bool keep = false;  // keep the dumps even when the audit is clean
  // The SM's laas.yaml: with `state_store: etcd` the recorded allocations and layout are keys
  // in the etcd it names, read from there (the directory's files otherwise, found from status).
  std::string config = "/etc/laas/laas.yaml";
};

using StatusRequester = std::function<int(nlohmann::json& status)>;

// Runs the audit and prints its JSON report; returns laasctl's exit code: 0 clean, 1
// violations, 2 a laas.yaml that does not name the SM's etcd, 69 the fabric or etcd could not
// be read, 70 the audit could not run, or the status request's own code.
int audit_from_switches(const StatusRequester& status, const SwitchAuditOptions& o);

}  // namespace laas::ctl

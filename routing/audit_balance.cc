// The audit's balance check: each tenant's worst shift-permutation congestion, against the
// same tenant routed alone.
#include <algorithm>

#include "routing/audit_checks.h"

namespace laas::routing::auditing {

// Shifts to evaluate for n hosts: all of 1..n-1, or max_shifts evenly spaced ones.
std::vector<int> AuditChecks::shifts(int n, bool* sampled) const {
  std::vector<int> s;
  const int all = n - 1;
  *sampled = opt_.max_shifts > 0 && all > opt_.max_shifts;
  const int count = *sampled ? opt_.max_shifts : all;
  for (int i = 0; i < count; ++i)
    s.push_back(*sampled ? 1 + static_cast<int>(static_cast<long>(i) * all / count) : i + 1);
  return s;
}

void AuditChecks::balance(int ti) {
  const auto& tenant = in_.tenants[ti];
  std::vector<HostId> hosts;
  for (HostId h : tenant.placement.hosts)
    if (h >= 0 && h < t_.num_hosts() && present(h)) hosts.push_back(h);
  std::sort(hosts.begin(), hosts.end());
  TenantBalance b;
  b.tenant = tenant.name;
  b.hosts = static_cast<int>(hosts.size());
  const int n = b.hosts;
  const auto list = shifts(n, &b.sampled);
  b.shifts = static_cast<int>(list.size());
  std::vector<Hop> hops;
  std::vector<int> touched;
  for (int s : list) {
    for (int i = 0; i < n; ++i) {
      const HostId src = hosts[i], dst = hosts[(i + s) % n];
      const int dnode = emb_.host_node[dst];
      if (trace(leaf_node(t_.leaf_of_host(src)), f_.lid_of(dnode), dnode, &hops) !=
          Outcome::kDelivered)
        continue;  // reported by check_hosts
      for (const Hop& h : hops) {
        int& l = load_[static_cast<std::size_t>(h.node) * 256 + h.port];
        if (l++ == 0) touched.push_back(h.node * 256 + h.port);
        b.worst = std::max(b.worst, l);
      }
    }
    for (int k : touched) load_[k] = 0;
    touched.clear();
  }
  if (opt_.compare_private) b.private_worst = private_balance(ti, hosts, list);
  if (b.private_worst >= 0 && b.worst > b.private_worst)
    add(FindingKind::kBalanceWorseThanPrivate, tenant.name, "", "",
        "worst " + std::to_string(b.worst) + " flows on a link, " +
            std::to_string(b.private_worst) + " when routed alone");
  rep_.balance.push_back(b);
}

}  // namespace laas::routing::auditing

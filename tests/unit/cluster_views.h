// What the independent checker reads of a Cluster: every tenant's hosts, links, idle links and
// repairs, as the checker's own TenantView (the checker never includes the allocator).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "allocator/cluster.h"
#include "check/checker.h"

namespace laas::test {

inline std::vector<check::TenantView> views(const allocator::Cluster& c) {
  std::vector<check::TenantView> out;
  for (const auto& [name, t] : c.tenants()) {
    check::TenantView v{name, t.placement.hosts, t.placement.links, c.placer().isolates()};
    v.idle = t.placement.idle;
    for (const auto& r : t.repairs) v.repairs.push_back({r.retired, r.added});
    out.push_back(std::move(v));
  }
  return out;
}

// Who holds each host and link (a tenant's name, "" free, "@management" reserved), as the
// checker's StateClaims.
inline check::StateClaims claims(const allocator::Cluster& c) {
  std::map<allocator::TenantIndex, std::string> names;
  for (const auto& [name, t] : c.tenants()) names[t.index] = name;
  auto name = [&](allocator::TenantIndex i) -> std::string {
    if (i == allocator::kFree) return "";
    if (i == allocator::kReserved) return "@management";
    auto it = names.find(i);
    return it == names.end() ? "@unknown" : it->second;
  };
  check::StateClaims s;
  for (topology::HostId h = 0; h < c.tree().num_hosts(); ++h)
    s.host_owner.push_back(name(c.state().host_owner(h)));
  for (topology::LinkId l = 0; l < c.tree().total_links(); ++l)
    s.link_owner.push_back(name(c.state().link_owner(l)));
  return s;
}

}  // namespace laas::test

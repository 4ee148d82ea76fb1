// What the independent checker reads of a Cluster: every tenant's hosts, links, idle links and
// repairs, as the checker's own TenantView (the checker never includes the allocator).
#pragma once

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

}  // namespace laas::test

#include "core/multicast.h"

#include <cinttypes>
#include <cstdio>

#include "core/controller.h"

namespace laas::core {

McastContext::McastContext(const topology::FatTree& t, const topology::Fabric& fabric,
                           const topology::Embedding& emb, routing::McastPolicy p)
    : tree(t), embedding(emb), policy(std::move(p)), owners(tree, emb, fabric) {
  for (const auto& n : fabric.nodes) node_guid.push_back(n.guid);
}

McastOutcome multicast_tree(const McastContext& ctx, const std::vector<Guid>& member_ports,
                            unsigned mlid) {
  McastOutcome out;
  routing::McastGroup group;
  group.seed = mlid;
  for (Guid g : member_ports) {
    if (const auto h = ctx.owners.host(g)) {
      group.hosts.push_back(*h);
    } else if (const auto s = ctx.owners.switch_at(g)) {
      group.switches.push_back(*s);
    } else {
      char buf[96];
      std::snprintf(buf, sizeof buf,
                    "MLID 0x%04x: member port 0x%016" PRIx64 " is not in the tree; left out", mlid,
                    static_cast<std::uint64_t>(g));
      out.warnings.push_back(buf);
    }
  }
  routing::McastTree t;
  try {
    t = routing::build_multicast_tree(ctx.tree, ctx.policy, group);
  } catch (const std::exception& e) {
    out.error = e.what();
    return out;
  }
  for (auto& w : t.warnings) out.warnings.push_back(std::move(w));
  out.group = t.cls == routing::McastClass::kTenant ? "tenant " + ctx.policy.tenants[t.tenant].key
                                                    : "shared";
  if (!t.exempt_links.empty())
    out.group += " (" + std::to_string(t.exempt_links.size()) + " member-tenant link(s) exempt)";
  for (auto& [node, ports] : routing::physical_ports(ctx.embedding, t))
    out.rows.push_back({ctx.node_guid[node], std::move(ports)});
  out.ok = true;
  return out;
}

bool same_policy(const routing::McastPolicy& a, const routing::McastPolicy& b) {
  if (a.tenants.size() != b.tenants.size() || a.management_hosts != b.management_hosts ||
      a.faulty_links != b.faulty_links)
    return false;
  for (std::size_t i = 0; i < a.tenants.size(); ++i) {
    const auto &x = a.tenants[i], &y = b.tenants[i];
    if (x.key != y.key || x.placement.hosts != y.placement.hosts ||
        x.placement.links != y.placement.links)
      return false;
  }
  return true;
}

McastOutcome Controller::multicast_tree(const std::vector<Guid>& member_ports,
                                        unsigned mlid) const {
  std::shared_ptr<const McastContext> ctx;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ctx = mcast_;
  }
  if (!ctx) {
    McastOutcome out;
    out.error = "no routing run of the laas engine yet";
    return out;
  }
  return core::multicast_tree(*ctx, member_ports, mlid);
}

}  // namespace laas::core

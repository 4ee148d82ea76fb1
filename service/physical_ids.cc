#include "service/physical_ids.h"

namespace laas::service {

PhysicalIds::PhysicalIds(const topology::FatTree& tree, const topology::Embedding& emb,
                         const topology::Fabric& fabric, bool index, const topology::Layout* known)
    : tree_(tree), emb_(emb), fabric_(fabric) {
  if (known && known->spec == tree.spec().text() &&
      static_cast<int>(known->hosts.size()) == tree.num_hosts() &&
      static_cast<int>(known->switches.size()) == tree.height())
    known_ = known;
  if (!index) return;
  std::vector<topology::Guid> guids(tree.num_hosts());
  std::vector<bool> present(tree.num_hosts());
  for (topology::HostId h = 0; h < tree.num_hosts(); ++h) {
    const PersistedHost id = host(h);
    host_at_[{id.leaf_guid, id.port}] = h;
    guids[h] = id.guid;
    present[h] = host_present(h);
  }
  owners_ = routing::OwnerIndex(guids, present);
  for (topology::LinkId l = 0; l < tree.total_links(); ++l) {
    const PersistedLink id = link(l);
    link_at_[{id.switch_guid, id.port}] = l;
  }
}

topology::Guid PhysicalIds::switch_guid(int level, int index) const {
  // switch_guid is kept for absent switches; embeddings built before it existed only have the
  // node, which every present switch has.
  if (static_cast<int>(emb_.switch_guid.size()) >= level &&
      static_cast<int>(emb_.switch_guid[level - 1].size()) > index &&
      emb_.switch_guid[level - 1][index] != 0)
    return emb_.switch_guid[level - 1][index];
  const int node = emb_.switch_node.at(level - 1).at(index);
  return node < 0 ? 0 : fabric_.nodes[node].guid;
}

std::string PhysicalIds::switch_name(int level, int index) const {
  const int node = emb_.switch_node.at(level - 1).at(index);
  if (node >= 0) return fabric_.nodes[node].name;
  if (known_ && index < static_cast<int>(known_->switches[level - 1].size()) &&
      !known_->switches[level - 1][index].name.empty())
    return known_->switches[level - 1][index].name;
  return "absent switch " + guid_hex(switch_guid(level, index));
}

int PhysicalIds::physical(int level, int index, int model_port) const {
  const auto& ports = emb_.port_map.at(level - 1).at(index);
  return model_port < static_cast<int>(ports.size()) && ports[model_port] > 0 ? ports[model_port]
                                                                              : model_port;
}

PersistedHost PhysicalIds::host(topology::HostId h) const {
  const auto peer = tree_.host_peer(h);
  PersistedHost id;
  id.leaf_guid = switch_guid(1, peer.index);
  id.port = physical(1, peer.index, peer.port);
  const int node = emb_.host_node.at(h);
  if (node >= 0) {
    id.guid = fabric_.nodes[node].port_guid;
    id.name = fabric_.nodes[node].name;
  } else if (known_) {
    id.guid = known_->hosts[h].port_guid;
    id.name = known_->hosts[h].name;
  }
  return id;
}

PersistedLink PhysicalIds::link(topology::LinkId l) const {
  const auto lo = tree_.link_lower(l);
  return {switch_guid(lo.level, lo.index), physical(lo.level, lo.index, lo.port)};
}

std::optional<topology::HostId> PhysicalIds::host_at(topology::Guid leaf_guid, int port) const {
  auto it = host_at_.find({leaf_guid, port});
  if (it == host_at_.end()) return std::nullopt;
  return it->second;
}

std::optional<topology::HostId> PhysicalIds::host_by_port_guid(topology::Guid port_guid) const {
  return owners_.host(port_guid);
}

std::optional<topology::LinkId> PhysicalIds::link_at(topology::Guid switch_guid, int port) const {
  auto it = link_at_.find({switch_guid, port});
  if (it == link_at_.end()) return std::nullopt;
  return it->second;
}

std::string PhysicalIds::link_name(topology::LinkId l) const {
  const auto lo = tree_.link_lower(l);
  return switch_name(lo.level, lo.index) + " port " +
         std::to_string(physical(lo.level, lo.index, lo.port));
}

std::pair<std::pair<int, int>, int> PhysicalIds::link_upper(topology::LinkId l) const {
  const auto up = tree_.link_upper(l);
  return {{up.level, up.index}, physical(up.level, up.index, up.port)};
}

std::optional<ModelTenant> to_model(const PersistedTenant& t, const PhysicalIds& ids,
                                    std::string* missing) {
  ModelTenant out;
  std::string why;
  auto note = [&](const std::string& what) { why += (why.empty() ? "" : ", ") + what; };
  for (const auto& h : t.hosts) {
    const auto id = h.leaf_guid ? ids.host_at(h.leaf_guid, h.port) : ids.host_by_port_guid(h.guid);
    if (id)
      out.intended.hosts.push_back(*id);
    else if (h.leaf_guid)
      note("host slot " + guid_hex(h.leaf_guid) + " port " + std::to_string(h.port));
    else
      note("host " + guid_hex(h.guid) +
           " (a version-1 state names hosts by GUID only; it must be present to be located)");
  }
  auto link_of = [&](const PersistedLink& l) -> topology::LinkId {
    if (auto id = ids.link_at(l.switch_guid, l.port)) return *id;
    note("link " + guid_hex(l.switch_guid) + "/" + std::to_string(l.port));
    return -1;
  };
  for (const auto& l : t.links) out.intended.links.push_back(link_of(l));
  for (const auto& r : t.repairs) {
    allocator::Repair repair;
    for (const auto& l : r.retired) repair.retired.push_back(link_of(l));
    for (const auto& l : r.added) repair.added.push_back(link_of(l));
    out.repairs.push_back(std::move(repair));
  }
  if (t.shape_numbers.size() == 6) {
    const auto& n = t.shape_numbers;
    out.intended.shape.leaves = {n[0], n[1], n[2]};
    out.intended.shape.pods = {n[3], n[4], n[5]};
  }
  if (!why.empty()) {
    if (missing) *missing = why;
    return std::nullopt;
  }
  return out;
}

PersistedTenant to_persisted(const allocator::Tenant& t, const PhysicalIds& ids,
                             const PersistedTenant* old) {
  PersistedTenant p{t.name, t.requested, {}, {}, t.placement.shape.text()};
  if (old) {  // what the tenant was given at creation stays with it
    p.pkey = old->pkey;
    p.slurm_accounts = old->slurm_accounts;
    p.slurm_users = old->slurm_users;
    p.openstack_project = old->openstack_project;
  }
  const auto& shape = t.placement.shape;
  p.shape_numbers = {shape.leaves.q, shape.leaves.d, shape.leaves.r,
                     shape.pods.q,   shape.pods.d,   shape.pods.r};
  for (auto h : t.placement.hosts) {
    PersistedHost id = ids.host(h);
    // A host that is down keeps the port GUID and name last seen on its slot; a slot holding
    // another port GUID than the one recorded keeps the recorded one (the newcomer is
    // unaccepted until `laasctl host accept` records it).
    if (old)
      for (const auto& was : old->hosts)
        if (was.leaf_guid == id.leaf_guid && was.port == id.port && was.guid &&
            (!id.guid || id.guid != was.guid || !ids.host_present(h))) {
          id.guid = was.guid;
          id.name = was.name;
        }
    if (old && !id.guid)
      for (const auto& was : old->hosts)
        if (was.leaf_guid == id.leaf_guid && was.port == id.port) id.name = was.name;
    p.hosts.push_back(id);
  }
  for (auto l : t.intended_links()) p.links.push_back(ids.link(l));
  for (const auto& r : t.repairs) {
    PersistedRepair pr;
    for (auto l : r.retired) pr.retired.push_back(ids.link(l));
    for (auto l : r.added) pr.added.push_back(ids.link(l));
    p.repairs.push_back(std::move(pr));
  }
  return p;
}

}  // namespace laas::service

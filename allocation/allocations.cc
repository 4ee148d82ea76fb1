#include "allocation/allocations.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "service/physical_ids.h"
#include "util/guid.h"

namespace laas::allocation {

using json = nlohmann::json;

namespace {

Guid parse_guid(const std::string& text) { return util::guid_or_throw(text); }
std::string format_guid(Guid guid) { return util::guid_hex(guid); }

}  // namespace

namespace {

json endpoint_json(const Endpoint& e, bool with_port, bool with_lid) {
  json j{{"name", e.name}, {"guid", format_guid(e.guid)}};
  if (with_port) j["port"] = e.port;
  if (with_lid) j["lid"] = e.lid;
  if (e.slot_switch) j["slot"] = {{"switch", format_guid(e.slot_switch)}, {"port", e.slot_port}};
  return j;
}

Endpoint endpoint_from(const json& j, bool with_port) {
  Endpoint e;
  e.name = j.at("name").get<std::string>();
  e.guid = parse_guid(j.at("guid").get<std::string>());
  if (with_port) e.port = j.at("port").get<int>();
  if (j.contains("lid")) e.lid = j.at("lid").get<int>();
  if (j.contains("slot")) {
    e.slot_switch = parse_guid(j.at("slot").at("switch").get<std::string>());
    e.slot_port = j.at("slot").at("port").get<int>();
  }
  return e;
}

json links_json(const std::vector<LinkRecord>& list) {
  json links = json::array();
  for (const auto& l : list)
    links.push_back({{"switch", endpoint_json(l.lower, true, false)},
                     {"peer", endpoint_json(l.upper, true, false)}});
  return links;
}

}  // namespace

std::string to_json(const Allocations& a) {
  json tenants = json::array();
  for (const auto& [name, t] : a.tenants) {
    json hosts = json::array();
    for (const auto& h : t.hosts) hosts.push_back(endpoint_json(h, false, true));
    json links = links_json(t.links);
    tenants.push_back({{"name", name},
                       {"requested", t.requested},
                       {"shape", t.shape},
                       {"hosts", std::move(hosts)},
                       {"links", std::move(links)}});
    if (!t.idle.empty()) tenants.back()["idle_links"] = links_json(t.idle);
  }
  json management = json::array();
  for (const auto& h : a.management) management.push_back(endpoint_json(h, false, true));
  json root{{"version", 1},
            {"topology", a.topology},
            {"sm_port_guid", format_guid(a.sm_port_guid)},
            {"management", std::move(management)},
            {"tenants", std::move(tenants)}};
  if (!a.isolated_links.empty()) root["isolated_links"] = links_json(a.isolated_links);
  if (!a.unaccepted.empty()) {
    json list = json::array();
    for (const auto& q : a.unaccepted)
      list.push_back({{"tenant", q.tenant},
                      {"recorded", endpoint_json(q.recorded, false, false)},
                      {"seen", endpoint_json(q.seen, false, true)}});
    root["quarantined"] = list;  // the name before "unaccepted", for readers of one release ago
    root["unaccepted"] = std::move(list);
  }
  if (!a.sm_ports.empty()) {
    json ports = json::array();
    for (Guid g : a.sm_ports) ports.push_back(format_guid(g));
    root["sm_ports"] = std::move(ports);
  }
  if (!a.servers.empty()) root["servers"] = a.servers;
  if (a.attached_open) {
    json ports = json::array();
    for (Guid g : *a.attached_open) ports.push_back(format_guid(g));
    root["attached_open"] = std::move(ports);
  }
  return root.dump(1) + "\n";
}

Allocations allocations_from_json(const std::string& text) {
  Allocations a;
  try {
    const json root = json::parse(text);
    if (root.at("version").get<int>() != 1) throw std::runtime_error("unsupported version");
    a.topology = root.value("topology", "");
    if (root.contains("sm_port_guid"))
      a.sm_port_guid = parse_guid(root.at("sm_port_guid").get<std::string>());
    if (root.contains("management"))
      for (const auto& h : root.at("management")) a.management.push_back(endpoint_from(h, false));
    if (root.contains("sm_ports"))
      for (const auto& g : root.at("sm_ports"))
        a.sm_ports.push_back(parse_guid(g.get<std::string>()));
    if (root.contains("attached_open")) {
      a.attached_open.emplace();
      for (const auto& g : root.at("attached_open"))
        a.attached_open->push_back(parse_guid(g.get<std::string>()));
    }
    if (root.contains("isolated_links"))
      for (const auto& l : root.at("isolated_links"))
        a.isolated_links.push_back(
            {endpoint_from(l.at("switch"), true), endpoint_from(l.at("peer"), true)});
    if (root.contains("servers"))
      a.servers = root.at("servers").get<std::map<std::string, std::string>>();
    // A file of the release before names them "quarantined" only.
    const char* unaccepted = root.contains("unaccepted") ? "unaccepted" : "quarantined";
    if (root.contains(unaccepted))
      for (const auto& q : root.at(unaccepted))
        a.unaccepted.push_back({q.at("tenant").get<std::string>(),
                                endpoint_from(q.at("recorded"), false),
                                endpoint_from(q.at("seen"), false)});
    for (const auto& t : root.at("tenants")) {
      TenantRecord r;
      r.name = t.at("name").get<std::string>();
      r.requested = t.value("requested", 0);
      r.shape = t.value("shape", "");
      for (const auto& h : t.at("hosts")) r.hosts.push_back(endpoint_from(h, false));
      for (const auto& l : t.at("links"))
        r.links.push_back({endpoint_from(l.at("switch"), true), endpoint_from(l.at("peer"), true)});
      if (t.contains("idle_links"))
        for (const auto& l : t.at("idle_links"))
          r.idle.push_back(
              {endpoint_from(l.at("switch"), true), endpoint_from(l.at("peer"), true)});
      if (r.requested == 0) r.requested = static_cast<int>(r.hosts.size());
      if (!a.tenants.emplace(r.name, r).second)
        throw std::runtime_error("tenant '" + r.name + "' appears twice");
    }
  } catch (const json::exception& e) {
    throw std::runtime_error(e.what());
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(e.what());
  }
  return a;
}

std::optional<Allocations> load_allocations(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    if (access(path.c_str(), F_OK) != 0) return std::nullopt;
    throw std::runtime_error(path + ": cannot be read");
  }
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    return allocations_from_json(ss.str());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

namespace {

LinkRecord link_record(const service::PhysicalIds& ids, const topology::FatTree& tree,
                       const topology::Embedding& emb, const topology::Fabric& fabric,
                       topology::LinkId l) {
  const auto lo = tree.link_lower(l);
  const auto [upper, upper_port] = ids.link_upper(l);
  auto lid = [&](int level, int index) {
    const int node = emb.switch_node[level - 1][index];
    return node < 0 ? 0 : fabric.lid_of(node);
  };
  return {{ids.switch_name(lo.level, lo.index), ids.switch_guid(lo.level, lo.index),
           ids.link(l).port, lid(lo.level, lo.index)},
          {ids.switch_name(upper.first, upper.second), ids.switch_guid(upper.first, upper.second),
           upper_port, lid(upper.first, upper.second)}};
}

bool placement_of(const TenantRecord& record, const service::PhysicalIds& ids,
                  allocator::Placement* out, std::string* why) {
  allocator::Placement p;
  for (const auto& h : record.hosts) {
    const auto id =
        h.slot_switch ? ids.host_at(h.slot_switch, h.slot_port) : ids.host_by_port_guid(h.guid);
    if (!id) {
      *why = "host " + h.name + " (" + format_guid(h.guid) + ") is not in the fabric";
      return false;
    }
    p.hosts.push_back(*id);
  }
  for (const auto* list : {&record.links, &record.idle})
    for (const auto& l : *list) {
      const auto id = ids.link_at(l.lower.guid, l.lower.port);
      if (!id) {
        *why = "link " + l.lower.name + " port " + std::to_string(l.lower.port) +
               " is not an up-link of the recognized tree";
        return false;
      }
      (list == &record.links ? p.links : p.idle).push_back(*id);
    }
  std::sort(p.hosts.begin(), p.hosts.end());
  std::sort(p.links.begin(), p.links.end());
  std::sort(p.idle.begin(), p.idle.end());
  *out = std::move(p);
  return true;
}

}  // namespace

// Identities come from the embedding's intended ports and switch GUIDs, which exist for absent
// hosts, cables and switches too.
TenantRecord make_record(const std::string& name, int requested,
                         const allocator::Placement& placement, const topology::FatTree& tree,
                         const topology::Embedding& emb, const topology::Fabric& fabric,
                         const topology::Layout* known) {
  const service::PhysicalIds ids(tree, emb, fabric, false, known);
  TenantRecord r;
  r.name = name;
  r.requested = requested;
  r.shape = placement.shape.text();
  for (topology::HostId h : placement.hosts) {
    const auto id = ids.host(h);
    const int node = emb.host_node[h];
    const std::string leaf = ids.switch_name(1, tree.leaf_of_host(h));
    Endpoint e{id.name.empty()
                   ? "(absent host on " + leaf + " port " + std::to_string(id.port) + ")"
                   : id.name,
               id.guid, 0, node < 0 ? 0 : fabric.lid_of(node)};
    e.slot_switch = id.leaf_guid;
    e.slot_port = id.port;
    r.hosts.push_back(std::move(e));
  }
  for (topology::LinkId l : placement.links)
    r.links.push_back(link_record(ids, tree, emb, fabric, l));
  for (topology::LinkId l : placement.idle)
    r.idle.push_back(link_record(ids, tree, emb, fabric, l));
  return r;
}

bool to_placement(const TenantRecord& record, const topology::FatTree& tree,
                  const topology::Embedding& emb, const topology::Fabric& fabric,
                  allocator::Placement* out, std::string* why) {
  const service::PhysicalIds ids(tree, emb, fabric);
  return placement_of(record, ids, out, why);
}

void record_unaccepted(Allocations& a, const std::vector<service::UnacceptedHost>& unaccepted,
                       const topology::Embedding& emb, const topology::Fabric& fabric) {
  for (const auto& q : unaccepted) {
    UnacceptedRecord r;
    r.tenant = q.tenant;
    r.recorded = {q.recorded_name, q.recorded_guid, 0, 0, q.leaf_guid, q.port};
    const int node = emb.host_node.at(q.host);
    r.seen = {q.seen_name, q.seen_guid, 0, node < 0 ? 0 : fabric.lid_of(node)};
    if (auto it = a.tenants.find(q.tenant); it != a.tenants.end())
      for (auto& h : it->second.hosts)
        if (h.slot_switch == q.leaf_guid && h.slot_port == q.port) {
          h.name = q.recorded_name.empty() ? h.name : q.recorded_name;
          h.guid = q.recorded_guid;
          h.lid = 0;
        }
    a.unaccepted.push_back(std::move(r));
  }
}

routing::AuditInput audit_input(const topology::Recognition& rec, const topology::Fabric& fabric,
                                const routing::LidTables& tables, const Allocations& alloc,
                                const std::vector<Guid>& extra_management) {
  routing::AuditInput input;
  input.fabric = &fabric;
  input.embedding = &rec.embedding;
  input.tree = &*rec.tree;
  input.tables = &tables;
  input.faulty_links = rec.embedding.missing_links;
  input.server_map = alloc.servers;
  const service::PhysicalIds ids(*rec.tree, rec.embedding, fabric);
  for (const auto& l : alloc.isolated_links)
    if (const auto id = ids.link_at(l.lower.guid, l.lower.port)) input.faulty_links.push_back(*id);
  // Unaccepted slots stay their tenants' hosts, audited as absent ones; the
  // newcomer's LID (as the fabric has it now) must be in no switch's table.
  std::vector<topology::HostId> hidden;
  for (const auto& q : alloc.unaccepted) {
    const auto h = q.recorded.slot_switch
                       ? ids.host_at(q.recorded.slot_switch, q.recorded.slot_port)
                       : std::nullopt;
    if (!h)
      throw std::runtime_error("unaccepted slot of tenant " + q.tenant + " (" + q.recorded.name +
                               ") is not in the fabric");
    const int node = rec.embedding.host_node[*h];
    routing::AuditUnaccepted a;
    a.host = *h;
    a.lid = node < 0 ? 0 : fabric.lid_of(node);
    a.tenant = q.tenant;
    a.name = node < 0 ? q.seen.name : fabric.nodes[node].name;
    a.detail = "tenant '" + q.tenant + "': slot " + format_guid(q.recorded.slot_switch) + " port " +
               std::to_string(q.recorded.slot_port) + " holds " +
               format_guid(node < 0 ? q.seen.guid : fabric.nodes[node].port_guid) + " (" + a.name +
               "), not the recorded " + format_guid(q.recorded.guid) + " (" + q.recorded.name +
               "): not accepted (`laasctl host accept`)";
    input.unaccepted.push_back(std::move(a));
    hidden.push_back(*h);
  }
  if (!hidden.empty()) {
    input.owned_embedding =
        std::make_shared<const topology::Embedding>(routing::without_hosts(rec.embedding, hidden));
    input.embedding = input.owned_embedding.get();
  }
  for (const auto& [name, record] : alloc.tenants) {
    routing::AuditTenant t;
    t.name = name;
    std::string why;
    if (!placement_of(record, ids, &t.placement, &why))
      throw std::runtime_error("tenant " + name + ": " + why);
    input.tenants.push_back(std::move(t));
  }
  std::vector<Guid> management = extra_management;
  if (alloc.sm_port_guid) management.push_back(alloc.sm_port_guid);
  for (const auto& m : alloc.management) management.push_back(m.guid);
  std::vector<Guid> optional;  // SMs recorded: exempt where they are, absent ones skipped
  for (Guid g : alloc.sm_ports)
    if (std::find(management.begin(), management.end(), g) == management.end())
      optional.push_back(g);
  management.insert(management.end(), optional.begin(), optional.end());
  for (Guid g : management) {
    bool found = false;
    for (size_t i = 0; i < fabric.nodes.size() && !found; ++i) {
      const auto& n = fabric.nodes[i];
      if (n.port_guid != g && n.guid != g) continue;
      found = true;
      const auto [level, index] = rec.embedding.node_model[i];
      if (level == 0) input.management_hosts.push_back(index);
      input.management_nodes.push_back(static_cast<int>(i));
    }
    if (!found && std::find(optional.begin(), optional.end(), g) == optional.end())
      throw std::runtime_error("management GUID " + format_guid(g) + " is not in the fabric");
  }
  if (alloc.attached_open)
    for (const auto& a : rec.embedding.attached)
      if (std::find(alloc.attached_open->begin(), alloc.attached_open->end(),
                    fabric.nodes[a.node].port_guid) == alloc.attached_open->end() &&
          std::find(management.begin(), management.end(), fabric.nodes[a.node].port_guid) ==
              management.end())
        input.closed_attached.push_back(a.node);
  return input;
}

}  // namespace laas::allocation

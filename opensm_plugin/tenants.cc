#include "opensm_plugin/tenants.h"

#include <fcntl.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

#include "opensm_plugin/config.h"

namespace laas::plugin {

using json = nlohmann::json;

std::vector<TenantRequest> load_tenant_requests(const std::string& path) {
  std::vector<TenantRequest> out;
  if (access(path.c_str(), F_OK) != 0) return out;
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
  if (root.IsNull()) return out;
  if (!root.IsSequence()) throw std::runtime_error(path + ": expected a list of tenants");
  std::set<std::string> seen;
  int i = 0;
  for (const auto& t : root) {
    ++i;
    const std::string where = path + ": tenant #" + std::to_string(i);
    try {
      if (!t.IsMap()) throw std::runtime_error(where + ": expected {name, hosts}");
      TenantRequest r;
      if (!t["name"]) throw std::runtime_error(where + ": no name");
      r.name = t["name"].as<std::string>();
      if (!t["hosts"]) throw std::runtime_error(where + " (" + r.name + "): no hosts");
      if (t["hosts"].IsSequence()) {
        for (const auto& h : t["hosts"]) r.host_list.push_back(h.as<std::string>());
        if (r.host_list.empty()) throw std::runtime_error(where + " (" + r.name + "): no hosts");
      } else {
        r.hosts = t["hosts"].as<int>();
        if (r.hosts <= 0)
          throw std::runtime_error(where + " (" + r.name + "): hosts must be at least 1");
      }
      for (const auto& kv : t) {
        const auto key = kv.first.as<std::string>();
        if (key != "name" && key != "hosts")
          throw std::runtime_error(where + " (" + r.name + "): unknown key '" + key + "'");
      }
      if (!r.name.empty() && r.name[0] == '_')
        throw std::runtime_error(where + ": names starting with '_' are reserved");
      if (!seen.insert(r.name).second)
        throw std::runtime_error(where + ": tenant '" + r.name + "' is listed twice");
      out.push_back(r);
    } catch (const YAML::Exception& e) {
      throw std::runtime_error(where + ": " + e.what());
    }
  }
  return out;
}

namespace {

json endpoint_json(const Endpoint& e, bool with_port, bool with_lid) {
  json j{{"name", e.name}, {"guid", format_guid(e.guid)}};
  if (with_port) j["port"] = e.port;
  if (with_lid) j["lid"] = e.lid;
  return j;
}

Endpoint endpoint_from(const json& j, bool with_port) {
  Endpoint e;
  e.name = j.at("name").get<std::string>();
  e.guid = parse_guid(j.at("guid").get<std::string>());
  if (with_port) e.port = j.at("port").get<int>();
  if (j.contains("lid")) e.lid = j.at("lid").get<int>();
  return e;
}

}  // namespace

std::string to_json(const Allocations& a) {
  json tenants = json::array();
  for (const auto& [name, t] : a.tenants) {
    json hosts = json::array();
    for (const auto& h : t.hosts) hosts.push_back(endpoint_json(h, false, true));
    json links = json::array();
    for (const auto& l : t.links)
      links.push_back({{"switch", endpoint_json(l.lower, true, false)},
                       {"peer", endpoint_json(l.upper, true, false)}});
    tenants.push_back({{"name", name},
                       {"requested", t.requested},
                       {"shape", t.shape},
                       {"hosts", hosts},
                       {"links", links}});
  }
  json management = json::array();
  for (const auto& h : a.management) management.push_back(endpoint_json(h, false, true));
  json root{{"version", 1},
            {"topology", a.topology},
            {"sm_port_guid", format_guid(a.sm_port_guid)},
            {"management", management},
            {"tenants", tenants}};
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
    for (const auto& t : root.at("tenants")) {
      TenantRecord r;
      r.name = t.at("name").get<std::string>();
      r.requested = t.value("requested", 0);
      r.shape = t.value("shape", "");
      for (const auto& h : t.at("hosts")) r.hosts.push_back(endpoint_from(h, false));
      for (const auto& l : t.at("links"))
        r.links.push_back({endpoint_from(l.at("switch"), true), endpoint_from(l.at("peer"), true)});
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

TenantRecord make_record(const std::string& name, int requested,
                         const allocator::Placement& placement, const topology::FatTree& tree,
                         const topology::Embedding& emb, const topology::Fabric& fabric) {
  TenantRecord r;
  r.name = name;
  r.requested = requested;
  r.shape = placement.shape.text();
  for (topology::HostId h : placement.hosts) {
    if (emb.host_node[h] < 0) continue;  // absent now (issue 10): not on the fabric to record
    const auto& node = fabric.nodes[emb.host_node[h]];
    r.hosts.push_back({node.name, node.port_guid, 0, fabric.lid_of(emb.host_node[h])});
  }
  for (topology::LinkId l : placement.links) {
    const auto lo = tree.link_lower(l);
    const auto up = tree.link_upper(l);
    const int a = emb.switch_node[lo.level - 1][lo.index];
    const int b = emb.switch_node[up.level - 1][up.index];
    // An absent switch keeps its recorded GUID and intended port (issue 10).
    auto end = [&](const topology::PortRef& ref, int node) {
      return Endpoint{node >= 0 ? fabric.nodes[node].name : tree.switch_name(ref.level, ref.index),
                      emb.switch_guid.empty() ? fabric.nodes[node].guid
                                              : emb.switch_guid[ref.level - 1][ref.index],
                      emb.port_map[ref.level - 1][ref.index][ref.port],
                      node >= 0 ? fabric.lid_of(node) : 0};
    };
    r.links.push_back({end(lo, a), end(up, b)});
  }
  return r;
}

bool to_placement(const TenantRecord& record, const topology::FatTree& tree,
                  const topology::Embedding& emb, const topology::Fabric& fabric,
                  allocator::Placement* out, std::string* why,
                  const std::vector<topology::LayoutHost>* known_hosts) {
  std::map<Guid, int> host_by_guid;
  for (topology::HostId h = 0; h < tree.num_hosts(); ++h)
    if (emb.host_node[h] >= 0) host_by_guid[fabric.nodes[emb.host_node[h]].port_guid] = h;
  if (known_hosts)  // hosts down now, by the GUID last seen in their slot (issue 10)
    for (topology::HostId h = 0; h < static_cast<int>(known_hosts->size()); ++h)
      if (emb.host_node[h] < 0 && (*known_hosts)[h].port_guid)
        host_by_guid.emplace((*known_hosts)[h].port_guid, h);
  // Switches by recorded GUID, absent ones too (issue 10).
  std::map<Guid, std::pair<int, int>> model_by_guid;
  for (int l = 1; l <= static_cast<int>(emb.switch_guid.size()); ++l)
    for (int i = 0; i < static_cast<int>(emb.switch_guid[l - 1].size()); ++i)
      if (emb.switch_guid[l - 1][i]) model_by_guid[emb.switch_guid[l - 1][i]] = {l, i};
  for (size_t i = 0; i < fabric.nodes.size(); ++i)
    if (fabric.nodes[i].is_switch && emb.node_model[i].first > 0)
      model_by_guid[fabric.nodes[i].guid] = emb.node_model[i];
  allocator::Placement p;
  for (const auto& h : record.hosts) {
    auto it = host_by_guid.find(h.guid);
    if (it == host_by_guid.end()) {
      *why = "host " + h.name + " (" + format_guid(h.guid) + ") is not in the fabric";
      return false;
    }
    p.hosts.push_back(it->second);
  }
  for (const auto& l : record.links) {
    auto it = model_by_guid.find(l.lower.guid);
    const auto where = "link " + l.lower.name + " port " + std::to_string(l.lower.port);
    if (it == model_by_guid.end()) {
      *why = where + ": switch " + format_guid(l.lower.guid) + " is not in the fabric";
      return false;
    }
    const auto [level, index] = it->second;
    if (level < 1 || level >= tree.height()) {
      *why = where + ": the switch is not a leaf or middle switch of the tree";
      return false;
    }
    const auto& map = emb.port_map[level - 1][index];
    int column = -1;
    for (int c = 0; c < tree.up_columns(level); ++c)
      if (map[tree.up_port(level, c)] == l.lower.port) column = c;
    topology::LinkId link = -1;
    if (column >= 0) {
      link = level == 1 ? tree.l1_link(index, column) : tree.l2_link(index, column);
    } else {
      // The cable is gone (a missing link): it is the one absent link of this switch towards
      // the recorded parent, if exactly one is.
      int candidates = 0;
      for (topology::LinkId m : emb.missing_links) {
        const auto lo = tree.link_lower(m);
        const auto up = tree.link_upper(m);
        if (lo.level != level || lo.index != index) continue;
        const int upn = emb.switch_node[up.level - 1][up.index];
        if (upn < 0 || fabric.nodes[upn].guid != l.upper.guid) continue;
        if (std::find(p.links.begin(), p.links.end(), m) != p.links.end()) continue;
        link = m;
        ++candidates;
      }
      if (candidates != 1) {
        *why = where + " is not an up-link of the recognized tree";
        return false;
      }
    }
    p.links.push_back(link);
  }
  std::sort(p.hosts.begin(), p.hosts.end());
  std::sort(p.links.begin(), p.links.end());
  *out = std::move(p);
  return true;
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
  for (const auto& [name, record] : alloc.tenants) {
    routing::AuditTenant t;
    t.name = name;
    std::string why;
    if (!to_placement(record, *rec.tree, rec.embedding, fabric, &t.placement, &why,
                      &rec.known_hosts))
      throw std::runtime_error("tenant " + name + ": " + why);
    input.tenants.push_back(std::move(t));
  }
  std::vector<Guid> management = extra_management;
  if (alloc.sm_port_guid) management.push_back(alloc.sm_port_guid);
  for (const auto& m : alloc.management) management.push_back(m.guid);
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
    if (!found)
      throw std::runtime_error("management GUID " + format_guid(g) + " is not in the fabric");
  }
  return input;
}

}  // namespace laas::plugin

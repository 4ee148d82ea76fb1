#include "topology/layout.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace laas::topology {
namespace {

using nlohmann::json;

std::string hex(Guid g) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(g));
  return buf;
}

Guid parse_hex(const json& j, const std::string& where) {
  if (!j.is_string()) throw std::runtime_error(where + ": expected a GUID string");
  const std::string s = j.get<std::string>();
  size_t used = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(s, &used, 0);
  } catch (const std::exception&) {
    used = 0;
  }
  if (s.empty() || used != s.size() || s[0] == '-')
    throw std::runtime_error(where + ": '" + s + "' is not a GUID");
  return v;
}

// Whether `layout` records `tree`: its host slots are the tree's.
bool records(const Layout* layout, const FatTree& tree) {
  return layout && layout->spec == tree.spec().text() &&
         static_cast<int>(layout->hosts.size()) == tree.num_hosts();
}

}  // namespace

std::string recorded_host_name(const FatTree& tree, const Embedding& emb, const Fabric& fabric,
                               const Layout* recorded, HostId host) {
  const bool same = records(recorded, tree);
  const int node = emb.host_node[host];
  if (node < 0) return same ? recorded->hosts[host].name : "";
  if (same && recorded->hosts[host].port_guid == fabric.nodes[node].port_guid &&
      !recorded->hosts[host].name.empty())
    return recorded->hosts[host].name;
  return fabric.nodes[node].name;
}

Layout layout_of(const FatTree& tree, const Embedding& emb, const Fabric& fabric,
                 const Layout* previous) {
  Layout out;
  out.spec = tree.spec().text();
  const bool same = records(previous, tree);
  out.switches.resize(tree.height());
  for (int l = 1; l <= tree.height(); ++l)
    for (int i = 0; i < tree.num_switches(l); ++i) {
      LayoutSwitch s;
      const int node = emb.switch_node[l - 1][i];
      s.guid = emb.switch_guid.empty() ? (node >= 0 ? fabric.nodes[node].guid : 0)
                                       : emb.switch_guid[l - 1][i];
      if (node >= 0)
        s.name = fabric.nodes[node].name;
      else if (same && previous->switches.size() > static_cast<size_t>(l - 1) &&
               previous->switches[l - 1].size() > static_cast<size_t>(i))
        s.name = previous->switches[l - 1][i].name;
      s.ports = emb.port_map[l - 1][i];
      out.switches[l - 1].push_back(std::move(s));
    }
  out.hosts.resize(tree.num_hosts());
  for (HostId h = 0; h < tree.num_hosts(); ++h) {
    const int node = emb.host_node[h];
    if (node >= 0)
      out.hosts[h] = {fabric.nodes[node].port_guid,
                      recorded_host_name(tree, emb, fabric, previous, h)};
    else if (same)
      out.hosts[h] = previous->hosts[h];
  }
  return out;
}

std::string layout_to_json(const Layout& layout) {
  json sw = json::array();
  for (size_t l = 0; l < layout.switches.size(); ++l)
    for (size_t i = 0; i < layout.switches[l].size(); ++i) {
      const auto& s = layout.switches[l][i];
      sw.push_back({{"level", l + 1},
                    {"index", i},
                    {"guid", hex(s.guid)},
                    {"name", s.name},
                    {"ports", s.ports}});
    }
  json hosts = json::array();
  for (size_t h = 0; h < layout.hosts.size(); ++h)
    hosts.push_back(
        {{"host", h}, {"guid", hex(layout.hosts[h].port_guid)}, {"name", layout.hosts[h].name}});
  json j = {{"version", 1}, {"topology", layout.spec}, {"switches", sw}, {"hosts", hosts}};
  return j.dump(1) + "\n";
}

Layout parse_layout(const std::string& text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("not JSON: ") + e.what());
  }
  try {
    if (!j.is_object()) throw std::runtime_error("expected an object");
    if (j.value("version", 0) != 1) throw std::runtime_error("field 'version': expected 1");
    Layout out;
    out.spec = j.at("topology").get<std::string>();
    FatTree tree = FatTree::parse(out.spec);  // throws SpecError
    out.switches.resize(tree.height());
    for (int l = 1; l <= tree.height(); ++l) out.switches[l - 1].resize(tree.num_switches(l));
    std::vector<std::vector<bool>> seen(tree.height());
    for (int l = 1; l <= tree.height(); ++l) seen[l - 1].assign(tree.num_switches(l), false);
    const auto& sw = j.at("switches");
    if (!sw.is_array()) throw std::runtime_error("field 'switches': expected a list");
    for (size_t k = 0; k < sw.size(); ++k) {
      const std::string where = "switches[" + std::to_string(k) + "]";
      const int l = sw[k].at("level").get<int>();
      const int i = sw[k].at("index").get<int>();
      if (l < 1 || l > tree.height() || i < 0 || i >= tree.num_switches(l))
        throw std::runtime_error(where + ": no switch (" + std::to_string(l) + ", " +
                                 std::to_string(i) + ") in " + out.spec);
      if (seen[l - 1][i]) throw std::runtime_error(where + ": listed twice");
      seen[l - 1][i] = true;
      auto& s = out.switches[l - 1][i];
      s.guid = parse_hex(sw[k].at("guid"), where + ".guid");
      s.name = sw[k].value("name", "");
      s.ports = sw[k].at("ports").get<std::vector<int>>();
      if (static_cast<int>(s.ports.size()) != tree.num_ports(l) + 1)
        throw std::runtime_error(where + ".ports: expected " +
                                 std::to_string(tree.num_ports(l) + 1) + " entries");
      for (int p : s.ports)
        if (p < 0 || p > 254) throw std::runtime_error(where + ".ports: port " + std::to_string(p));
    }
    for (int l = 1; l <= tree.height(); ++l)
      for (int i = 0; i < tree.num_switches(l); ++i)
        if (!seen[l - 1][i])
          throw std::runtime_error("field 'switches': switch (" + std::to_string(l) + ", " +
                                   std::to_string(i) + ") is not listed");
    out.hosts.resize(tree.num_hosts());
    if (j.contains("hosts")) {
      for (const auto& h : j.at("hosts")) {
        const int id = h.at("host").get<int>();
        if (id < 0 || id >= tree.num_hosts())
          throw std::runtime_error("field 'hosts': no host " + std::to_string(id));
        out.hosts[id] = {parse_hex(h.at("guid"), "hosts[" + std::to_string(id) + "].guid"),
                         h.value("name", "")};
      }
    }
    return out;
  } catch (const json::exception& e) {
    throw std::runtime_error(e.what());
  } catch (const SpecError& e) {
    throw std::runtime_error(std::string("field 'topology': ") + e.what());
  }
}

bool same_wiring(const Layout& a, const Layout& b) {
  if (a.spec != b.spec || a.switches.size() != b.switches.size()) return false;
  for (size_t l = 0; l < a.switches.size(); ++l) {
    if (a.switches[l].size() != b.switches[l].size()) return false;
    for (size_t i = 0; i < a.switches[l].size(); ++i)
      if (a.switches[l][i].guid != b.switches[l][i].guid ||
          a.switches[l][i].ports != b.switches[l][i].ports)
        return false;
  }
  return true;
}

}  // namespace laas::topology

#include "export/routing_chains.h"

#include <algorithm>
#include <map>
#include <set>

#include "export/names.h"

namespace laas::exports {

namespace {

constexpr const char* kFormat = "routing chains";

// "1-4/7/9-10": the physical-port list syntax of a port-guid rule.
std::string port_list(const std::set<int>& ports) {
  std::string out;
  for (auto it = ports.begin(); it != ports.end();) {
    const int first = *it;
    int last = first;
    auto next = std::next(it);
    while (next != ports.end() && *next == last + 1) {
      last = *next;
      ++next;
    }
    if (!out.empty()) out += '/';
    out += std::to_string(first);
    if (last > first) out += "-" + std::to_string(last);
    it = next;
  }
  return out;
}

void check_engine(const std::string& engine, const std::string& what) {
  if (engine != "minhop" && engine != "ftree" && engine != "updn")
    throw ExportError(kFormat, what,
                      "engine '" + engine + "' is not one the manual lists (minhop, ftree, updn)");
}

}  // namespace

RoutingChainsFiles generate_routing_chains(const std::vector<TenantRecord>& tenants,
                                           const TreeRecord* tree,
                                           const RoutingChainsOptions& options) {
  check_engine(options.base_engine, "option base_engine");
  check_engine(options.tenant_engine, "option tenant_engine");
  if (!options.fallback_engine.empty())
    check_engine(options.fallback_engine, "option fallback_engine");

  // Host name -> (leaf switch GUID, leaf port), from the tree.
  std::map<std::string, std::pair<Guid, int>> leaf_port;
  std::map<Guid, std::string> switch_name;
  if (tree)
    for (const auto& sw : tree->switches) {
      switch_name[sw.guid] = sw.name;
      if (sw.level == 1)
        for (const auto& d : sw.down) leaf_port[d.name] = {sw.guid, d.port};
    }

  // No comments: the manual documents none for these files, so none are written.
  RoutingChainsFiles files;
  files.chains =
      "unicast-step\n"
      "id: 1\n"
      "use: whole fabric (management ports and free hosts)\n"
      "engine: " +
      options.base_engine +
      "\n"
      "topology: 0\n"
      "end-unicast-step\n";
  std::set<std::string> seen;
  int step = 2;
  for (std::size_t i = 0; i < tenants.size(); ++i) {
    const auto& t = tenants[i];
    const std::string subject = "tenant '" + t.name + "'";
    const std::string hcas = options.group_prefix + t.name + "_hcas";
    const std::string sws = options.group_prefix + t.name + "_switches";
    check_name(sws, kMaxGroupName, kFormat, subject, "port group name '" + sws + "'");
    if (!seen.insert(t.name).second) throw ExportError(kFormat, subject, "listed twice");
    if (t.hosts.empty()) throw ExportError(kFormat, subject, "has no hosts");

    std::string hosts_rule;
    for (const auto& h : t.hosts) {
      const std::string hs = subject + " host '" + h.name + "'";
      if (options.host_match == RoutingChainsOptions::HostMatch::kName) {
        check_name(h.name, 64, kFormat, hs, "host name");
        hosts_rule += (hosts_rule.empty() ? "" : ", ") + std::string("hostname=") + h.name;
      } else {
        if (h.guid == 0) throw ExportError(kFormat, hs, "port GUID is 0");
        hosts_rule += (hosts_rule.empty() ? "" : ", ") + guid_hex(h.guid);
      }
    }
    // Switch GUID -> ports, lower switches first, each in order of first appearance.
    std::vector<Guid> order;
    std::map<Guid, std::set<int>> ports;
    auto add = [&](const PortEnd& e, const std::string& what) {
      if (e.guid == 0) throw ExportError(kFormat, subject + " " + what, "switch GUID is 0");
      if (e.port < 1 || e.port > 254)
        throw ExportError(kFormat, subject + " " + what,
                          "port " + std::to_string(e.port) + " is not in 1..254");
      if (!ports.count(e.guid)) order.push_back(e.guid);
      ports[e.guid].insert(e.port);
      if (!e.name.empty()) switch_name.emplace(e.guid, e.name);
    };
    if (tree)
      for (const auto& h : t.hosts) {
        auto it = leaf_port.find(h.name);
        if (it == leaf_port.end())
          throw ExportError(kFormat, subject + " host '" + h.name + "'",
                            "is not below any leaf of the tree");
        add({"", it->second.first, it->second.second}, "host '" + h.name + "' leaf port");
      }
    for (const auto& l : t.links) add(l.lower, "link switch '" + l.lower.name + "'");
    for (const auto& l : t.links) add(l.upper, "link peer '" + l.upper.name + "'");
    if (order.empty())
      throw ExportError(kFormat, subject, "has no switch ports (no links, no tree)");
    std::string sw_rule;
    for (auto g : order)
      sw_rule += (sw_rule.empty() ? "" : ", ") + guid_hex(g) + "@" + port_list(ports[g]);
    // Switch names only describe (use:); a name a policy line cannot hold is left out.
    std::string sw_names;
    for (auto g : order) {
      const auto& n = switch_name[g];
      const bool printable = !n.empty() && std::all_of(n.begin(), n.end(), [](char c) {
        return c > ' ' && c < 0x7f && c != ':' && c != '#';
      });
      sw_names += (sw_names.empty() ? "" : " ") + (printable ? n : guid_hex(g));
    }

    files.port_groups +=
        std::string(files.port_groups.empty() ? "" : "\n") + "port-group\nname: " + hcas +
        "\nuse: LaaS tenant " + t.name + " hosts\n" +
        (options.host_match == RoutingChainsOptions::HostMatch::kName ? "port-name: "
                                                                      : "port-guid: ") +
        hosts_rule + "\nend-port-group\n";
    files.port_groups += "\nport-group\nname: " + sws + "\nuse: LaaS tenant " + t.name +
                         " switch ports on " + sw_names + "\nport-guid: " + sw_rule +
                         "\nend-port-group\n";
    const int topo = static_cast<int>(i) + 1;
    files.topologies += std::string(files.topologies.empty() ? "" : "\n") +
                        "topology\nid: " + std::to_string(topo) + "\nsw-grp: " + sws +
                        "\nhca-grp: " + hcas + "\nend-topology\n";
    const int id = step++;
    files.chains += "\nunicast-step\nid: " + std::to_string(id) + "\nuse: LaaS tenant " + t.name +
                    "\nengine: " + options.tenant_engine + "\ntopology: " + std::to_string(topo) +
                    "\nend-unicast-step\n";
    if (!options.fallback_engine.empty())
      files.chains += "\nunicast-step\nid: " + std::to_string(step++) + "\nuse: LaaS tenant " +
                      t.name + " fallback\nengine: " + options.fallback_engine +
                      "\ntopology: " + std::to_string(topo) +
                      "\nfallback-to: " + std::to_string(id) + "\nend-unicast-step\n";
  }
  return files;
}

}  // namespace laas::exports

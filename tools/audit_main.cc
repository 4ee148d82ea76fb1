// laas-audit: offline isolation audit of a real fabric's forwarding tables.
//   laas-audit --fabric ibnetdiscover.out --lfts dump_fts.out --allocations allocations.json
//              [--mfts dump_fts_M.out]
//              [--sl2vl sl2vl.out]   (smpquery sl2vl / laas-sl2vl-dump output)
// Recognizes the fat-tree, maps the allocations (by GUID) onto it, traces every relevant
// pair through the tables read back from the switches and reports isolation violations and
// each tenant's balance against the same tenant routed alone. Exit 0 clean, 1 violations,
// 2 bad input.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>

#include "allocation/allocations.h"
#include "routing/audit.h"
#include "routing/ibroute.h"
#include "routing/mft_dump.h"
#include "routing/multicast.h"
#include "routing/sl2vl.h"
#include "topology/ibnetdiscover.h"
#include "topology/recognize.h"
#include "util/cli_parse.h"
#include "util/guid.h"

namespace {

int bad_input(const std::string& msg) {
  std::cerr << "laas-audit: " << msg << "\n";
  return 2;
}

// Follows the tables hop by hop from each host of `t` to each other one.
void print_paths(const laas::topology::Fabric& fabric,
                 const std::vector<std::vector<std::uint8_t>>& tables,
                 const laas::allocation::TenantRecord& t) {
  std::map<laas::topology::Guid, int> node_of;
  for (size_t i = 0; i < fabric.nodes.size(); ++i)
    if (!fabric.nodes[i].is_switch) node_of[fabric.nodes[i].port_guid] = static_cast<int>(i);
  // Hosts that are down (not in the fabric read back) have no path to print.
  for (const auto& src : t.hosts)
    for (const auto& dst : t.hosts) {
      if (src.guid == dst.guid || !node_of.count(src.guid) || !node_of.count(dst.guid)) continue;
      const int s = node_of.at(src.guid);
      const int d = node_of.at(dst.guid);
      const int dlid = fabric.lid_of(d);
      std::cout << src.name << " -> " << dst.name << ":";
      int node = -1;
      for (const auto& p : fabric.nodes[s].ports)
        if (p.peer_node >= 0) node = p.peer_node;
      for (int hop = 0; hop < 16 && node >= 0 && node != d; ++hop) {
        const auto& table = tables[node];
        const int port = dlid < static_cast<int>(table.size()) ? table[dlid] : 0xFF;
        std::cout << " " << fabric.nodes[node].name << ":" << port;
        if (port == 0 || port == 0xFF || port >= static_cast<int>(fabric.nodes[node].ports.size()))
          break;
        node = fabric.nodes[node].ports[port].peer_node;
      }
      std::cout << (node == d ? "" : " UNREACHABLE") << "\n";
    }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Audit a fat-tree's real forwarding tables against LaaS tenant allocations.",
               "laas-audit"};
  std::string fabric_path, lfts_path, alloc_path, layout_path, mfts_path, sl2vl_path;
  std::vector<std::string> management;
  bool as_json = false;
  std::string paths_of, sl2vl_of;
  bool owners = false;
  int max_findings = 10;
  app.add_option("--fabric", fabric_path, "ibnetdiscover output (or an ibsim net file)")
      ->required();
  app.add_option("--lfts", lfts_path, "dump_fts / dump_lfts.sh / ibroute output")->required();
  app.add_option("--allocations", alloc_path, "allocations.json written by the plugin");
  app.add_option("--layout", layout_path,
                 "layout.json written by the plugin: the intended tree, so parts that are down "
                 "keep their identities");
  app.add_option("--mfts", mfts_path,
                 "multicast tables (dump_fts -M / ibroute -M output): audit them too");
  app.add_option("--sl2vl", sl2vl_path,
                 "SL2VL tables read back (smpquery sl2vl / laas-sl2vl-dump output): trace every "
                 "host pair through them and compare them with the first-hop drop plan");
  app.add_option("--management", management,
                 "extra management node or port GUIDs (the SM's port is read from allocations)");
  app.add_option("--max-findings", max_findings, "findings listed per kind (counts are complete)");
  app.add_flag("--json", as_json, "print the report as JSON");
  app.add_option("--paths", paths_of,
                 "instead of auditing, print the path (switch:port hops) of every ordered pair "
                 "of this tenant's hosts, as read from the tables");
  app.add_option("--sl2vl-of", sl2vl_of,
                 "instead of auditing, print the SL2VL verdict read back for every (input, "
                 "output) port pair that touches this tenant's ports (needs --sl2vl)");
  app.add_flag("--owners", owners,
               "instead of auditing, print each leaf's hosts with their owner (tenant, free, "
               "management)");
  if (const int rc = laas::util::parse_command_line(app, argc, argv); rc >= 0) return rc;

  using namespace laas;
  topology::Fabric fabric;
  try {
    fabric = topology::read_ibnetdiscover_file(fabric_path);
  } catch (const std::exception& e) {
    return bad_input(e.what());
  }
  topology::Layout layout;
  topology::RecognizeOptions recognize_options;
  if (!layout_path.empty()) {
    std::ifstream in(layout_path);
    if (!in) return bad_input(layout_path + ": cannot open");
    std::stringstream text;
    text << in.rdbuf();
    try {
      layout = topology::parse_layout(text.str());
    } catch (const std::exception& e) {
      return bad_input(layout_path + ": " + e.what());
    }
    recognize_options.layout = &layout;
  }
  const auto rec = topology::recognize(fabric, recognize_options);
  if (!rec.ok()) return bad_input(fabric_path + ": the fabric is not a fat-tree: " + rec.error);
  const auto& tree = *rec.tree;
  routing::LidTables tables;
  {
    std::ifstream in(lfts_path);
    if (!in) return bad_input(lfts_path + ": cannot open");
    try {
      tables = routing::tables_by_node(fabric, routing::parse_ibroute(in, lfts_path));
    } catch (const std::exception& e) {
      return bad_input(e.what());
    }
  }
  allocation::Allocations alloc;
  if (!alloc_path.empty()) {
    try {
      auto a = allocation::load_allocations(alloc_path);
      if (!a) return bad_input(alloc_path + ": cannot open");
      alloc = std::move(*a);
    } catch (const std::exception& e) {
      return bad_input(e.what());
    }
  }
  std::vector<topology::Guid> extra;
  for (const auto& g : management) {
    try {
      extra.push_back(util::guid_or_throw(g));
    } catch (const std::exception& e) {
      return bad_input(std::string("--management: ") + e.what());
    }
  }
  routing::Mfts mfts;
  if (!mfts_path.empty()) {
    std::ifstream in(mfts_path);
    if (!in) return bad_input(mfts_path + ": cannot open");
    try {
      mfts = routing::mfts_by_node(fabric, routing::parse_ibroute_mft(in, mfts_path));
    } catch (const std::exception& e) {
      return bad_input(e.what());
    }
  }
  routing::AuditInput input;
  try {
    input = allocation::audit_input(rec, fabric, tables, alloc, extra);
    if (!layout_path.empty()) input.layout = &layout;
  } catch (const std::exception& e) {
    return bad_input(alloc_path + ": " + e.what());
  }
  routing::Sl2VlTables sl2vl;
  if (!sl2vl_path.empty()) {
    std::ifstream in(sl2vl_path);
    if (!in) return bad_input(sl2vl_path + ": cannot open");
    try {
      sl2vl = routing::parse_sl2vl(in, fabric, sl2vl_path);
    } catch (const std::exception& e) {
      return bad_input(e.what());
    }
    input.sl2vl = &sl2vl;
  }
  if (owners || !sl2vl_of.empty()) {
    routing::Sl2VlInput si;
    si.fabric = &fabric;
    si.embedding = input.embedding;  // without quarantined slots
    si.tree = &tree;
    si.tables = &tables;
    for (const auto& q : input.quarantined) si.quarantined_hosts.push_back(q.host);
    std::vector<std::string> names;
    for (const auto& t : input.tenants) {
      si.tenants.push_back(t.placement);
      names.push_back(t.name);
    }
    si.management_hosts = input.management_hosts;
    si.management_nodes = input.management_nodes;
    si.closed_attached = input.closed_attached;
    const auto own = routing::port_owners(si);
    auto text = [&](const routing::PortOwner& o) -> std::string {
      switch (o.cls) {
        case routing::PortClass::kTenant:
          return names[o.tenant];
        case routing::PortClass::kManagement:
          return "management";
        case routing::PortClass::kFreeHost:
          return "free";
        case routing::PortClass::kOpenLink:
          return "open";
        case routing::PortClass::kNone:
          break;
      }
      return "none";
    };
    if (owners) {
      for (int leaf = 0; leaf < tree.num_leaves(); ++leaf) {
        const int node = rec.embedding.switch_node[0][leaf];
        if (node < 0) continue;
        std::cout << fabric.nodes[node].name << ":";
        for (int slot = 0; slot < tree.hosts_per_leaf(); ++slot) {
          const auto h = tree.host_at(leaf, slot);
          const int hn = rec.embedding.host_node[h];
          if (hn < 0) continue;
          const auto ref = tree.host_peer(h);
          const int port = rec.embedding.port_map[0][leaf][ref.port];
          std::cout << " " << fabric.nodes[hn].name << "=" << text(own[node][port]);
        }
        std::cout << "\n";
      }
      return 0;
    }
    if (sl2vl_path.empty()) return bad_input("--sl2vl-of needs --sl2vl");
    auto it = std::find(names.begin(), names.end(), sl2vl_of);
    if (it == names.end()) return bad_input("no tenant " + sl2vl_of + " in " + alloc_path);
    const int ti = static_cast<int>(it - names.begin());
    std::set<std::tuple<int, int, int>> exemptions;
    for (const auto& e : routing::plan_sl2vl(si).exemptions)
      exemptions.insert({e.node, e.in_port, e.out_port});
    for (std::size_t n = 0; n < fabric.nodes.size(); ++n) {
      const int node = static_cast<int>(n);
      if (own[n].empty() || !sl2vl.has(node)) continue;
      const auto& ports = fabric.nodes[n].ports;
      const int np = static_cast<int>(own[n].size());
      for (int i = 0; i < np; ++i)
        for (int o = 1; o < np; ++o) {
          if (ports[o].peer_node < 0 || (i > 0 && ports[i].peer_node < 0)) continue;
          // The pairs that decide who may enter the tenant's ports.
          if (!(own[n][o].cls == routing::PortClass::kTenant && own[n][o].tenant == ti)) continue;
          const auto m = sl2vl.mask(node, i, o);
          const bool exempt = exemptions.count({node, i, o}) > 0;
          std::cout << fabric.nodes[n].name << " in " << i << " (" << text(own[n][i]) << ") out "
                    << o << " (" << text(own[n][o]) << "): "
                    << (m == routing::kAllSls ? "drop"
                        : m != 0              ? "partial"
                        : exempt              ? "exempt"
                                              : "pass")
                    << "\n";
        }
    }
    return 0;
  }
  if (!paths_of.empty()) {
    auto it = alloc.tenants.find(paths_of);
    if (it == alloc.tenants.end()) return bad_input("no tenant " + paths_of + " in " + alloc_path);
    print_paths(fabric, tables, it->second);
    return 0;
  }
  routing::AuditOptions options;
  options.max_findings_per_kind = max_findings;
  routing::AuditReport report;
  try {
    report = routing::audit(input, options);
  } catch (const std::exception& e) {
    return bad_input(e.what());
  }
  routing::McastAuditReport mreport;
  if (!mfts_path.empty()) {
    try {
      mreport = routing::audit_multicast(input, mfts, nullptr, max_findings);
    } catch (const std::exception& e) {
      return bad_input(e.what());
    }
  }
  const long violations = report.violations() + mreport.violations();
  if (as_json) {
    auto j = routing::to_json(report);
    if (!mfts_path.empty()) {
      j["multicast"] = routing::to_json(mreport);
      j["ok"] = violations == 0;
    }
    j["topology"] = tree.spec().text();
    j["missing_links"] = rec.embedding.missing_links.size();
    j["missing_hosts"] = rec.embedding.missing_hosts.size();
    j["missing_switches"] = rec.embedding.missing_switches.size();
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "fabric: " << tree.spec().text() << ", " << tree.num_hosts() << " hosts, "
              << rec.embedding.missing_links.size() << " links, "
              << rec.embedding.missing_hosts.size() << " hosts and "
              << rec.embedding.missing_switches.size() << " switches down; " << input.tenants.size()
              << " tenants; " << report.traces << " paths traced\n";
    for (const auto& [kind, n] : report.counts) std::cout << "  " << kind << ": " << n << "\n";
    for (const auto& f : report.findings)
      std::cout << (routing::is_violation(f.kind) ? "VIOLATION " : "note ")
                << routing::to_string(f.kind) << (f.tenant.empty() ? "" : " [" + f.tenant + "]")
                << " " << f.source << " -> " << f.destination << ": " << f.detail << "\n";
    for (const auto& [name, n] : report.figures) std::cout << "  " << name << ": " << n << "\n";
    for (const auto& e : report.exemptions) std::cout << "exemption " << e << "\n";
    for (const auto& b : report.balance)
      std::cout << "balance " << b.tenant << ": " << b.hosts << " hosts, worst link load "
                << b.worst << " over " << b.shifts << (b.sampled ? " sampled" : "")
                << " shifts; private tree " << b.private_worst << "\n";
    if (!mfts_path.empty()) {
      std::cout << "multicast: " << mreport.groups.size() << " groups\n";
      for (const auto& g : mreport.groups) {
        char mlid[8];
        std::snprintf(mlid, sizeof mlid, "0x%04x", g.mlid);
        std::cout << "  group " << mlid << ": " << g.cls << (g.tenant.empty() ? "" : " " + g.tenant)
                  << ", " << g.receivers << " receivers, " << g.switches << " switches, " << g.links
                  << " links\n";
      }
      for (const auto& [kind, n] : mreport.counts) std::cout << "  " << kind << ": " << n << "\n";
      for (const auto& f : mreport.findings) {
        char mlid[8];
        std::snprintf(mlid, sizeof mlid, "0x%04x", f.mlid);
        std::cout << (routing::is_violation(f.kind) ? "VIOLATION " : "note ")
                  << routing::to_string(f.kind) << " " << mlid
                  << (f.tenant.empty() ? "" : " [" + f.tenant + "]") << " " << f.where << ": "
                  << f.detail << "\n";
      }
    }
    std::cout << (violations == 0 ? "OK: no isolation violation\n"
                                  : "FAIL: " + std::to_string(violations) + " violations\n");
  }
  return violations == 0 ? 0 : 1;
}

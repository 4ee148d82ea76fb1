// laas-audit: offline isolation audit of a real fabric's forwarding tables.
//   laas-audit --fabric ibnetdiscover.out --lfts dump_fts.out --allocations allocations.json
//              [--mfts dump_fts_M.out]
// Recognizes the fat-tree, maps the allocations (by GUID) onto it, traces every relevant
// pair through the tables read back from the switches and reports isolation violations and
// each tenant's balance against the same tenant routed alone. Exit 0 clean, 1 violations,
// 2 bad input.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "opensm_plugin/config.h"
#include "opensm_plugin/tenants.h"
#include "routing/audit.h"
#include "routing/ibroute.h"
#include "routing/mft_dump.h"
#include "routing/multicast.h"
#include "topology/ibnetdiscover.h"
#include "topology/recognize.h"

namespace {

int bad_input(const std::string& msg) {
  std::cerr << "laas-audit: " << msg << "\n";
  return 2;
}

// Follows the tables hop by hop from each host of `t` to each other one.
void print_paths(const laas::topology::Fabric& fabric,
                 const std::vector<std::vector<std::uint8_t>>& tables,
                 const laas::plugin::TenantRecord& t) {
  std::map<laas::topology::Guid, int> node_of;
  for (size_t i = 0; i < fabric.nodes.size(); ++i)
    if (!fabric.nodes[i].is_switch) node_of[fabric.nodes[i].port_guid] = static_cast<int>(i);
  for (const auto& src : t.hosts)
    for (const auto& dst : t.hosts) {
      if (src.guid == dst.guid) continue;
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
  std::string fabric_path, lfts_path, alloc_path, layout_path, mfts_path;
  std::vector<std::string> management;
  bool as_json = false;
  std::string paths_of;
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
  app.add_option("--management", management,
                 "extra management node or port GUIDs (the SM's port is read from allocations)");
  app.add_option("--max-findings", max_findings, "findings listed per kind (counts are complete)");
  app.add_flag("--json", as_json, "print the report as JSON");
  app.add_option("--paths", paths_of,
                 "instead of auditing, print the path (switch:port hops) of every ordered pair "
                 "of this tenant's hosts, as read from the tables");
  CLI11_PARSE(app, argc, argv);

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
  plugin::Allocations alloc;
  if (!alloc_path.empty()) {
    try {
      auto a = plugin::load_allocations(alloc_path);
      if (!a) return bad_input(alloc_path + ": cannot open");
      alloc = std::move(*a);
    } catch (const std::exception& e) {
      return bad_input(e.what());
    }
  }
  std::vector<topology::Guid> extra;
  for (const auto& g : management) {
    try {
      extra.push_back(plugin::parse_guid(g));
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
    input = plugin::audit_input(rec, fabric, tables, alloc, extra);
  } catch (const std::exception& e) {
    return bad_input(alloc_path + ": " + e.what());
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

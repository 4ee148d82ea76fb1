#include "sdn/lfts_file.h"

#include <algorithm>
#include <vector>

#include "export/output.h"
#include "routing/ibroute.h"

namespace laas::sdn {

namespace {

// The engine refuses the whole file for one bad port (and another engine routes instead):
// find it here, with the switch and LID named.
void check_table(const topology::Fabric& fabric, std::size_t node, const routing::LidTable& lft) {
  const auto& sw = fabric.nodes[node];
  if (!sw.is_switch)
    throw LftsError("lfts_file: node " + std::to_string(node) + " (" + sw.name +
                    ") has a forwarding table but is not a switch");
  for (std::size_t lid = 1; lid < lft.size(); ++lid) {
    const std::uint8_t port = lft[lid];
    if (port != routing::kNoRoute && port >= sw.ports.size())
      throw LftsError("lfts_file: switch " + sw.name + ": LID " + std::to_string(lid) +
                      " routed to port " + std::to_string(port) + ", the switch has " +
                      std::to_string(sw.ports.size() - 1) + " ports");
  }
}

}  // namespace

std::string lfts_text(const topology::Fabric& fabric, const routing::LidTables& tables) {
  if (tables.size() != fabric.nodes.size())
    throw LftsError("lfts_file: " + std::to_string(tables.size()) + " tables for " +
                    std::to_string(fabric.nodes.size()) + " fabric nodes");
  std::string out =
      "# Forwarding tables written by laas-sdn for OpenSM's file routing engine\n"
      "# (routing_engine file, lfts_file). Generated: edits are overwritten.\n";
  // In switch GUID order whatever order the fabric was read in (libibnetdisc, an
  // ibnetdiscover file): the same tables give the same file, so a rewrite shows as a change
  // only where a table changed.
  std::vector<std::size_t> order;
  for (std::size_t n = 0; n < tables.size(); ++n)
    if (!tables[n].empty()) order.push_back(n);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return fabric.nodes[a].guid < fabric.nodes[b].guid;
  });
  for (std::size_t n : order) {
    check_table(fabric, n, tables[n]);
    out += routing::format_ibroute(fabric, static_cast<int>(n), tables[n]);
  }
  return out;
}

void write_lfts_file(const std::string& path, const topology::Fabric& fabric,
                     const routing::LidTables& tables) {
  exports::write_output_file(path, lfts_text(fabric, tables));
}

}  // namespace laas::sdn

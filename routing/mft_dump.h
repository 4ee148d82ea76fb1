// Multicast forwarding tables as infiniband-diags prints them: `ibroute -M <lid>` for one
// switch, `dump_fts -M` / dump_mfts for every switch. Read back from real switches, they feed
// the multicast audit (laas-audit --mfts).
#pragma once

#include <istream>
#include <string>
#include <vector>

#include "routing/ibroute.h"
#include "routing/multicast.h"

namespace laas::routing {

struct DumpedMft {
  topology::Guid guid = 0;  // as printed in the header
  topology::Lid lid = 0;    // 0 when addressed by directed route
  std::string name;
  Mft mft;       // MLID -> ports (0 = the switch itself)
  int line = 0;  // header line, for messages
};

// Parses one or more "Multicast mlids [...] of switch ... guid 0x... (name):" blocks: a
// "Ports:" line gives each port's column, then one row per MLID with an 'x' under each port
// of the group. Throws DumpError ("<source>:<line>: <reason>: <the line>").
std::vector<DumpedMft> parse_ibroute_mft(std::istream& in, const std::string& source = "<input>");

// Places dumped tables by GUID onto the fabric's nodes, one slot per node; throws DumpError for
// an unknown GUID, a non-switch, or a switch dumped twice.
Mfts mfts_by_node(const topology::Fabric& fabric, const std::vector<DumpedMft>& dumps);

// The inverse, in ibroute -M's layout (tests, and deliberately wrong tables).
std::string format_ibroute_mft(const topology::Fabric& fabric, int switch_node, const Mft& mft);

}  // namespace laas::routing

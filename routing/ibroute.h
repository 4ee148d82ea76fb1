// Forwarding tables as infiniband-diags prints them: `ibroute <lid>` for one switch, and the
// concatenation dump_fts / dump_lfts.sh prints for every switch. Read back from real switches,
// they feed the audit (laasctl audit).
#pragma once

#include <istream>
#include <stdexcept>
#include <string>
#include <vector>

#include "routing/routing.h"
#include "topology/fabric.h"

namespace laas::routing {

// A malformed dump; what() is "<source>:<line>: <reason>: <the line>".
class DumpError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct DumpedTable {
  topology::Guid guid = 0;  // as printed in the header (the switch's node/port-0 GUID)
  topology::Lid lid = 0;    // the switch's LID; 0 when addressed by directed route (dump_fts)
  std::string name;         // node description from the header, may be empty
  LidTable table;           // LID-indexed, kNoRoute where nothing was printed
  int line = 0;             // header line, for messages
};

// Parses one or more "Unicast lids [...] of switch Lid N guid 0x... (name):" blocks. Lines
// that are blank, dump_lfts.sh's warning or a '#' comment (as OpenSM's file engine skips them) are
// ignored; anything else throws.
std::vector<DumpedTable> parse_ibroute(std::istream& in, const std::string& source = "<input>");

// Places dumped tables by GUID (node GUID or port GUID) onto the fabric's nodes; throws
// DumpError for an unknown GUID, a non-switch GUID, or a switch dumped twice.
LidTables tables_by_node(const topology::Fabric& fabric, const std::vector<DumpedTable>& dumps);

// The inverse, in ibroute's format (tests, and laas-sdn's lfts_file: sdn/lfts_file.h); control
// characters of node descriptions are printed as '?', so every entry stays on its line.
std::string format_ibroute(const topology::Fabric& fabric, int switch_node, const LidTable& table);

}  // namespace laas::routing

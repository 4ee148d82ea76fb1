// Whether the SM applied the tables: the lfts_file laas-sdn wrote against the tables read back
// from the switches (dump_fts, or ibroute for each switch), both in the format
// routing::parse_ibroute reads, switches matched by GUID.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "routing/ibroute.h"
#include "routing/routing.h"
#include "topology/fabric.h"

namespace laas::sdn {

struct Readback {
  int switches = 0;                // switches the file lists
  int entries = 0;                 // LIDs compared (every LID up to the larger table of each pair)
  int differing = 0;               // LIDs whose port differs (one missing counts as no route)
  int missing_switches = 0;        // switches of the file that the read-back lacks
  std::vector<std::string> lines;  // the first differences, one a line
  bool applied() const { return differing == 0 && missing_switches == 0; }
};

// Every switch of `wrote`, every LID: the port read back must be the one written, and a LID
// the file leaves out must read back unrouted (0xFF), as the file engine clears it. Switches
// read back that the file does not list are not compared (the file engine leaves them with
// no route at all; the caller decides whether that matters). At most `max_lines` lines.
Readback compare_readback(const std::vector<routing::DumpedTable>& wrote,
                          const std::vector<routing::DumpedTable>& read,
                          std::size_t max_lines = 20);

// laas-sdn's check after a reload, in the unit the SM sends: LFT blocks of 64 LIDs.
struct BlockCheck {
  int switches = 0;            // switches read back
  int switches_differing = 0;  // of those, holding a block other than written (or not answering)
  long blocks = 0;             // blocks compared
  long blocks_differing = 0;
  std::vector<std::string> lines;  // the first differences, one a line
  bool applied() const { return switches_differing == 0; }
};

// One switch: every block of `wrote` (LIDs 0..size-1) against `read`; an entry past the end of
// either is unrouted (0xFF), as the file engine leaves what its file does not list.
void compare_blocks(const std::string& name, const routing::LidTable& wrote,
                    const routing::LidTable& read, BlockCheck& out, std::size_t max_lines = 20);

// The switches (fabric node indexes) whose table in `now` differs from `before` (by node GUID),
// a switch not in `before` included: those a reload changes, and those worth reading back.
std::vector<int> changed_switches(const topology::Fabric& fabric, const routing::LidTables& now,
                                  const std::map<topology::Guid, routing::LidTable>& before);

}  // namespace laas::sdn

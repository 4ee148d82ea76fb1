// Whether the SM applied the tables: the lfts_file laas-sdn wrote against the tables read back
// from the switches (dump_fts, or ibroute for each switch), both in the format
// routing::parse_ibroute reads, switches matched by GUID.
#pragma once

#include <string>
#include <vector>

#include "routing/ibroute.h"

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

}  // namespace laas::sdn

// The tables an SM last sent, kept durably in the state directory. After its start OpenSM
// knows nothing of what the switches hold (its record of each switch's table starts empty), so
// a first routing run that must fail closed -- a tenant state nobody can read, an exception --
// would send every switch empty tables: the fabric would go dark at an SM restart. With this
// record such a run gives every switch what it last got: the forwarding table and the
// first-hop drop, by switch node GUID. A pure encoder and decoder; the engine owns the file.
//
// Format (little-endian): the 8-byte magic "LAASTBL1", a u32 switch count, then per switch a
// u64 node GUID, a u32 table length and that many LID -> port bytes, a u16 port count P
// (port 0 included; 0: no SL2VL plan) and P*P u16 drop masks ([in * P + out]); at the end a
// u64 FNV-1a of everything before it, so a cut or damaged file is refused, never half used.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "routing/sl2vl.h"
#include "topology/fabric.h"

namespace laas::routing {

struct SwitchTables {
  std::vector<std::uint8_t> lft;     // LID -> port (0xFF: no route)
  int ports = 0;                     // SL2VL plan size (0: none)
  std::vector<std::uint16_t> drops;  // [in * ports + out] SLs sent to VL15
};

struct SavedTables {
  std::unordered_map<topology::Guid, SwitchTables> switches;  // by switch node GUID
};

// The record of one routing run's output: `tables` and `sl2vl` are per fabric node (as
// RouteOutcome has them), `switch_guids` the node GUID of each switch node (0: not a switch,
// left out).
std::string encode_saved_tables(const std::vector<topology::Guid>& switch_guids,
                                const std::vector<std::vector<std::uint8_t>>& tables,
                                const Sl2VlTables& sl2vl);

// Throws std::runtime_error saying what is wrong (a cut file, a damaged one, another format).
SavedTables decode_saved_tables(const std::string& bytes);

}  // namespace laas::routing

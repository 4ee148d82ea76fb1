// The tables an SM last sent, kept durably in the state directory. After its start OpenSM
// knows nothing of what the switches hold (its record of each switch's table starts empty), so
// a first routing run that must fail closed -- a tenant state nobody can read, an exception --
// would send every switch empty tables: the fabric would go dark at an SM restart. With this
// record such a run gives every switch what it last got: the forwarding table and the
// first-hop drop, by switch node GUID. A pure encoder and decoder; the engine owns the file.
//
// The record must not mislead a later start: LIDs move while OpenSM is down (its guid2lid
// cache lost or edited, reassign_lids, another SM that assigned them), hosts are re-cabled, a
// write can fail or be cut off by a kill, and a deposed master may still write. So it keeps,
// beside the tables, who every LID belonged to (port GUID, and for a host port the switch port
// it was cabled to), the term of the shared state it was written in and when; restorable()
// keeps only the entries whose LID still belongs to the same port at the same place.
//
// Format 2 (little-endian): the 8-byte magic "LAASTBL2", a u64 term, an i64 write time (Unix
// seconds), a u32 LID count and per LID a u16 LID, a u64 port GUID, a u64 switch node GUID and
// a u8 switch port (both 0 for a switch's own LID); then a u32 switch count and per switch a
// u64 node GUID, a u32 table length and that many LID -> port bytes, a u16 port count P (port 0
// included; 0: no SL2VL plan) and P*P u16 drop masks ([in * P + out]); at the end a u64
// FNV-1a of everything before it, so a cut or damaged file is refused, never half used.
// Format 1 ("LAASTBL1": no LID owners, no term) is refused: nothing in it can tell a moved
// host from an unmoved one.
#pragma once

#include <cstdint>
#include <map>
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

// Whom a LID belongs to: the port GUID (a switch's port 0, a host port) and, for a host port,
// the switch port it is cabled to (switch 0: a switch's own LID, or not cabled).
struct LidOwner {
  topology::Guid port = 0;
  topology::Guid switch_guid = 0;
  int switch_port = 0;
  bool operator==(const LidOwner& o) const {
    return port == o.port && switch_guid == o.switch_guid && switch_port == o.switch_port;
  }
  bool operator!=(const LidOwner& o) const { return !(*this == o); }
};
using LidOwners = std::map<topology::Lid, LidOwner>;

// When and under which term of the shared state the tables were written.
struct SavedStamp {
  std::uint64_t term = 0;       // the shared state's term the writer held (0: no shared state)
  std::int64_t written_at = 0;  // Unix seconds
};

struct SavedTables {
  SavedStamp stamp;
  LidOwners lids;  // every LID the fabric had when the tables were computed
  std::unordered_map<topology::Guid, SwitchTables> switches;  // by switch node GUID
};

// The record of one routing run's output: `tables` and `sl2vl` are per fabric node (as
// RouteOutcome has them), `switch_guids` the node GUID of each switch node (0: not a switch,
// left out), `lids` whom each LID belonged to in that run's fabric.
std::string encode_saved_tables(const SavedStamp& stamp, const LidOwners& lids,
                                const std::vector<topology::Guid>& switch_guids,
                                const std::vector<std::vector<std::uint8_t>>& tables,
                                const Sl2VlTables& sl2vl);

// The same format from a record (the tables a start failing closed gave back, kept again under
// its own term); switches in GUID order.
std::string encode_saved_tables(const SavedTables& saved);

// A hash of an encoded file without its write time: equal for the same term, LID owners and
// tables (a writer skips rewriting what the file holds).
std::size_t saved_tables_content_hash(const std::string& bytes);

// Throws std::runtime_error saying what is wrong (a cut file, a damaged one, another format,
// the older format 1).
SavedTables decode_saved_tables(const std::string& bytes);

// Why tables written in `saved`'s term must not be used when the last master before this SM
// held `last_term` (empty: they may). A file from an older term was written before some later
// master sent tables of its own -- it may have been killed before writing, or failed to -- so
// it is not what the switches last got. `last_term` 0: no term is known (no shared state, or
// one nobody can read): not checked.
std::string older_term_refusal(const SavedStamp& saved, std::uint64_t last_term);

// What restorable() left out.
struct RestoreReport {
  std::vector<topology::Lid> moved;  // LIDs whose owner is not the recorded one (sorted)
  std::size_t entries_dropped = 0;   // LFT entries set to 0xFF (no route)
  std::size_t ports_cut = 0;         // switch ports whose SL2VL drops now drop everything
};

// The tables of `saved` that still fit the fabric whose LIDs belong to `now`: an LFT entry is
// kept only where its LID belongs to the same port GUID, cabled to the same switch port, as
// when the tables were sent; every other entry is 0xFF (unreachable -- never another port's
// route). A switch port where another host port is cabled now (or none was, or none is) drops
// every SL both ways in the SL2VL plan, so a host cabled into another's place does not get
// that host's first hop. Switches without a plan keep none. The result's `lids` are `now`.
SavedTables restorable(const SavedTables& saved, const LidOwners& now, RestoreReport* report);

}  // namespace laas::routing

// LIDs numbered leaf by leaf, for OpenSM's guid2lid file. OpenSM gives LIDs in the order its
// sweep finds ports, which interleaves the leaves: on an 11,664-host tree the 18 hosts of a leaf
// fall in 18 different 64-LID blocks of every forwarding table, so a tenant of whole leaves
// touches a third of every switch's blocks and its change uploads that many. Numbered leaf by
// leaf (the hosts of a leaf, then those of the next in the tree's order; with rails the leaves
// of one server group are next to each other) a tenant's LIDs are a few runs of consecutive
// LIDs and a change touches a few blocks a switch. OpenSM takes the file's LIDs at its next start
// (the guid2lid in its cache directory, OSM_CACHE_DIR).
#pragma once

#include <string>
#include <vector>

#include "topology/embedding.h"
#include "topology/fabric.h"
#include "topology/fat_tree.h"

namespace laas::topology {

struct LidAssignment {
  Guid port_guid = 0;
  Lid base = 0;  // first LID; base .. base + 2^lmc - 1 are the port's
  Lid last = 0;
};

// Every port of the fabric with a GUID: the tree's hosts leaf by leaf, then its switches
// (level by level), then the ports outside the tree, each 2^lmc LIDs aligned to 2^lmc.
// Throws std::invalid_argument when a port's GUID is unknown (0), a GUID repeats, or the
// unicast LIDs (0x0001-0xBFFF) do not suffice.
std::vector<LidAssignment> leaf_ordered_lids(const Fabric& fabric, const FatTree& tree,
                                             const Embedding& embedding, int lmc);

// OpenSM's guid2lid format: "0x<port GUID> 0x<first LID> 0x<last LID>", a blank line after each.
std::string format_guid2lid(const std::vector<LidAssignment>& lids);

}  // namespace laas::topology

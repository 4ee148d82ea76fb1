// Recognition: a discovered Fabric -> the FatTree it is, and how the model sits on it.
//
// Levels are ranked from the hosts up: leaves are the switches with channel adapters, every
// other switch sits one level above the first switch level it is cabled to. The parameters
// m_i, w_i, p_i are read off the graph (pods are the connected leaf/level-2 components, p_i
// the largest number of parallel cables between two switches). Node and port numbering,
// GUIDs and names may be in any order. Model indices are chosen deterministically: leaves,
// hosts and switches in natural order of their node description (then GUID), subject to
// the tree's structure, so a fabric written by laas-topogen embeds as the identity.
//
// The intended tree comes from one of three sources, in this order: a recorded Layout (the
// plugin's layout.json, GUIDs and physical ports from the first recognition), a declared spec
// (laas.yaml `topology:`), or the largest consistent tree the cabling shows (m1 = the most
// hosts seen on a leaf, and so on). Absent hosts, cables and switches are listed in the
// Embedding (missing_*), never a reason to refuse. Cables outside the tree are not either
//: an adapter on a tree switch's unused port (storage on a spine, an SM host cabled
// twice) is an attached host, a cable between two leaves or switches of one level an extra
// cable (Embedding::attached, extra_cables); a switch most of whose neighbours carry more hosts
// than it does is above them. Refused: a switch cabled to itself (a loop cable), hosts on more
// than three levels of switches, disjoint groups, and whatever the declared spec cannot hold.
#pragma once

#include <optional>
#include <string>

#include "topology/embedding.h"
#include "topology/fabric.h"
#include "topology/fat_tree.h"
#include "topology/layout.h"

namespace laas::topology {

// kGrown: the recorded layout, grown by switches cabled to it since (staged build-out).
enum class TreeSource { kLayout, kDeclared, kCabling, kGrown };

struct Recognition {
  std::optional<FatTree> tree;  // set on success
  Embedding embedding;
  std::string error;    // why the fabric is not a fat-tree we recognize; empty on success
  int sm_node = -1;     // fabric node holding the SM's port (-1: not given or not found)
  HostId sm_host = -1;  // the model host running the SM, -1 when the SM is on a switch
  TreeSource source = TreeSource::kCabling;
  std::string source_note;  // one line: where the intended tree came from (and why)
  // kGrown: the grown layout (recorded switches at their model indices, host identities of the
  // recorded slots kept) and one line saying what grew ("grew the intended tree from ... to
  // ...: +1 leaf, +1 spine").
  std::optional<Layout> grown;
  std::string growth;
  bool ok() const { return tree.has_value(); }
};

struct RecognizeOptions {
  Guid sm_port_guid = 0;           // the port GUID the subnet manager runs on (0: unknown)
  const Layout* layout = nullptr;  // the recorded tree; used when the fabric fits it
  std::string declared;            // a spec the tree must be (laas.yaml `topology:`)
  // Failing closed on a fabric that does not fit: place the recorded layout only, with a loop
  // cable set aside as an extra cable (never routed over) instead of refused, so that an SM
  // restarted on a miscabled fabric still routes the recorded tree rather than nothing.
  bool set_aside_loops = false;
};

// `sm_port_guid` (0: unknown) is the port GUID the subnet manager runs on.
Recognition recognize(const Fabric& fabric, Guid sm_port_guid = 0);
Recognition recognize(const Fabric& fabric, const RecognizeOptions& options);

// Places the recorded layout on `fabric`: switches by GUID, hosts and links by physical port.
// Returns an error (and leaves `out` unspecified) when the fabric has a cable the layout does
// not know.
std::string embed_layout(const Layout& layout, const Fabric& fabric, Recognition* out,
                         bool set_aside_loops = false);

// Staged build-out. `bigger` recognizes the fabric afresh (from the cabling or the
// declared spec) where switches the recorded layout does not know are cabled to it. When it
// contains the recorded tree -- every recorded switch it places is at the same level, in the
// same pod and plane, at the same position relative to the other recorded switches -- returns
// the grown layout: recorded switches keep their model indices and the physical ports of their
// recorded model ports, host slots keep their identities, and new switches take the positions
// the recorded layout never saw a switch in, then positions after the recorded ones, in the
// order `bigger` gives them. Model ids, LIDs' slots and column numbers therefore do not move.
// Otherwise nullopt and `why` says what does not fit (a recabling is not a growth).
std::optional<Layout> grow_layout(const Layout& recorded, const Recognition& bigger,
                                  const Fabric& fabric, std::string* why);
// "grew the intended tree from A to B: +1 leaf, +1 spine" (switches `to` has and `from` lacks).
std::string growth_summary(const Layout& from, const Layout& to);

// Checks that `emb` places `tree` on `fabric`: every present host and every present model link
// maps to a real cable between the mapped ports, absent parts are listed as missing, and every
// cable of the fabric is one of them. Returns
// an empty string when it does, else the first mismatch. Used by tests and as a self-check.
std::string verify_embedding(const FatTree& tree, const Embedding& emb, const Fabric& fabric);

// Natural order of names ("comp-2" < "comp-10"); used to number hosts and switches.
bool natural_less(const std::string& a, const std::string& b);

}  // namespace laas::topology

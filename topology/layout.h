// The intended tree, recorded once by physical identity: the spec, every model switch's node
// GUID, every model port's physical port. Host slots are (leaf GUID, physical port). The
// plugin writes it (layout.json in the state directory) at the first successful recognition
// and recognizes against it from then on, so a host, cable or switch that goes down is an
// absent part of the same tree, never a reason to derive a different, smaller one.
#pragma once

#include <string>
#include <vector>

#include "topology/embedding.h"
#include "topology/fabric.h"
#include "topology/fat_tree.h"

namespace laas::topology {

struct LayoutSwitch {
  Guid guid = 0;           // node GUID; 0 when never seen
  std::string name;        // node description when last seen (for messages only)
  std::vector<int> ports;  // [model port] -> physical port; [0] = 0
};

struct LayoutHost {
  Guid port_guid = 0;  // the host port last seen in this slot; 0 when never seen
  std::string name;
};

struct Layout {
  std::string spec;                                 // canonical pgft(...) / xgft(...) text
  std::vector<std::vector<LayoutSwitch>> switches;  // [level-1][index]
  std::vector<LayoutHost> hosts;                    // [HostId]
};

// The name a host slot is recorded by: the node description first seen with the port GUID the
// slot holds now (a description is its host's root's word: rewriting it renames nothing), the
// description now for a port `recorded` does not know yet (what this run records), and the
// recorded name for a host that is down. "" for a slot never seen. `recorded` counts only
// when it records `tree` (the same spec and host count); it may be null.
std::string recorded_host_name(const FatTree& tree, const Embedding& emb, const Fabric& fabric,
                               const Layout* recorded, HostId host);

// The layout an embedding realises on `fabric` (host identities from the present hosts,
// `previous` for absent ones when it has the same shape).
Layout layout_of(const FatTree& tree, const Embedding& emb, const Fabric& fabric,
                 const Layout* previous = nullptr);

// JSON text; parse_layout throws std::runtime_error naming the field that is wrong.
std::string layout_to_json(const Layout& layout);
Layout parse_layout(const std::string& text);

// Whether two layouts record the same tree, switches and ports (host identities aside).
bool same_wiring(const Layout& a, const Layout& b);

}  // namespace laas::topology

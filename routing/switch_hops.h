// OpenSM's min-hop matrices computed in one pass. OpenSM keeps, per switch and per switch LID,
// the hop count through every port (osm_switch_t::hops; host LIDs are reached through their
// switch's LID, plus one). Its own pass (osm_ucast_mgr_build_lid_matrices) relaxes every
// switch's neighbours until nothing changes: seconds at 1,620 switches. The result is plain
// breadth-first distances, so a routing engine can fill the matrices itself (a pure function
// of who is cabled to whom) and OpenSM's dumps and min-hop fallbacks read the same values.
//
// The values, as OpenSM's pass leaves them (hop weights 1, every link healthy):
//  - port 0: the least hop count (0 towards the switch itself);
//  - a port cabled to another switch R: 1 + R's least hop count to the target (so 1 towards
//    R itself, 2 back towards the switch itself), or no path;
//  - any other port (a host, nothing, a loop-back cable): no path.
#pragma once

#include <cstdint>
#include <vector>

#include "topology/fabric.h"

namespace laas::routing {

constexpr std::uint8_t kNoPath = 0xFF;  // OSM_NO_PATH

// Switches 0..n-1 and, per switch and physical port (index 0 is the switch's own port), the
// switch cabled there, or -1.
struct SwitchGraph {
  std::vector<std::vector<int>> peer;  // [switch][port] -> switch, -1 none
};

// The switches of a fabric numbered in node order, each port's peer switch (hosts: -1). The
// plugin builds its graph from OpenSM's own tables; tests and benchmarks from a model fabric.
SwitchGraph switch_graph(const topology::Fabric& fabric);

class HopMatrix {
 public:
  HopMatrix() = default;
  // Breadth-first from every switch. Throws std::invalid_argument on a peer out of range.
  explicit HopMatrix(const SwitchGraph& graph);

  int size() const { return n_; }
  // Least hop count from switch `from` to switch `to` (0 for itself), kNoPath if unreachable.
  std::uint8_t least(int from, int to) const {
    return dist_[static_cast<std::size_t>(to) * static_cast<std::size_t>(n_) + from];
  }
  // The hop count from `from` to `to` leaving through `port`, as OpenSM stores it.
  std::uint8_t via(int from, int port, int to) const;
  // Every port's hop count at once (row has peer[from].size() entries).
  void fill_row(int from, int to, std::uint8_t* row) const;

 private:
  int n_ = 0;
  std::vector<std::vector<int>> peer_;
  // [to * n + from]: one target's distances side by side, as fill_row reads them
  std::vector<std::uint8_t> dist_;
};

}  // namespace laas::routing

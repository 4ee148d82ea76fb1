// Servers, the unit a tenant holds. GPU servers have 4-8 HCAs cabled to different
// rail leaves, HPC nodes a dual-port HCA cabled to two leaves: every one of those ports is a
// host of the tree, and a server is every host port with the same host name -- the first word
// of a node description of several words ("gpu017 mlx5_3" -> "gpu017"), the ports of one
// multi-port CA, or the administrator's map. A tenant gets whole servers: all their cabled
// ports, or none. On a fabric where every server has one port, servers and hosts are the same.
//
// A node description is set by the host's own root: hosts that share a one-word description
// ("comp-1" three times) stay separate servers, as before, and the name is refused for
// placement (use GUIDs). The administrator's map is the way to group ports that cannot be
// trusted by name.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "topology/embedding.h"
#include "topology/fabric.h"
#include "topology/fat_tree.h"
#include "topology/layout.h"

namespace laas::topology {

struct Servers {
  std::vector<std::string> names;          // [server] its name
  std::vector<std::vector<HostId>> ports;  // [server] its host ports, in host order
  std::vector<int> server_of;              // [host] its server
  // [host] the node GUID of the multi-port CA the port belongs to (0: a CA of one port, or a
  // host that is down; empty: not known): the ports a management port widens to.
  std::vector<Guid> adapter_of{};

  int count() const { return static_cast<int>(names.size()); }
  // Some server has several ports: placement, reservations and exports go by server.
  bool multi_port() const;
  // The server named `name` (-1: none, or several servers share the name).
  int find(const std::string& name) const;
};

// The server a port belongs to: the administrator's map (`servers:` in laas.yaml: node
// description or its first word -> server name) first, else the node description's first
// word. An empty description gives "".
std::string server_name(const std::string& node_description,
                        const std::map<std::string, std::string>& admin_map = {});

// The server grouping of a recognized fabric, the one the service places by, the engine and
// the audit check by: every host port by the name layout.json records for it
// (topology::recorded_host_name: never the description a host's root rewrote since), its
// multi-port CA, and the administrator's map (laas.yaml's `servers:`). `recorded` may be null
// (no layout recorded yet: the names this fabric shows, the ones the first run records).
Servers group_servers(const FatTree& tree, const Embedding& emb, const Fabric& fabric,
                      const Layout* recorded, const std::map<std::string, std::string>& admin_map);

// Groups the hosts of `tree` by server. `host_names[h]` is host h's node description (as seen
// now, or as last seen for a host that is down; "" for a slot never seen: that host is a
// server of its own, named by the model); `host_cas[h]` the node GUID of the multi-port CA
// the port belongs to (0: not a port of a split multi-port CA, or not known).
Servers group_servers(const FatTree& tree, const std::vector<std::string>& host_names,
                      const std::vector<Guid>& host_cas = {},
                      const std::map<std::string, std::string>& admin_map = {});

// Rail groups: leaves whose hosts are ports of the same servers form a group, and each leaf of
// a group is one of its rails (in leaf order). Returns (group, rail) per leaf; a leaf with no
// multi-port server is a group of its own, rail 0.
std::vector<std::pair<int, int>> leaf_rails(const FatTree& tree, const Servers& servers);

// Each leaf's rail, as the rail placement and the checker count rails: a multi-port server's
// ports sit on distinct leaves, and the i-th of them in leaf order is on rail i. A leaf with no
// multi-port server is rail 0. Empty when no server has several ports.
std::vector<int> rail_of_leaf(const FatTree& tree, const Servers& servers);

// The servers of a rail-optimized tree as laas-topogen --rails writes it: leaf i serves rail
// i % rails of server group i / rails, and slot k of a group's leaves is one server. Throws
// SpecError when a pod's leaves cannot be split into `rails` rails.
Servers rail_servers(const FatTree& tree, int rails);

}  // namespace laas::topology

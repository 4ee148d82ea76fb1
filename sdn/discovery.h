// The fabric as discovery by directed route finds it, as plain records (sdn/route_discover.h
// fills them through sdn/mad_port.h at the edge), and their conversion into the project's
// topology::Fabric -- the same Fabric topology::read_ibnetdiscover gives for `ibnetdiscover` output
// of the same fabric (the offline path): node GUIDs, port GUIDs, the LIDs the SM assigned, node
// descriptions, cables, multi-port CAs split one node per cabled port.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "topology/fabric.h"

namespace laas::sdn {

// Records that contradict themselves (a cable one side does not know, a port beyond the
// node's count); what() names the node GUID and port.
class DiscoveryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class NodeType { kCa, kSwitch, kRouter };

struct DiscoveredPort {
  int number = 0;           // 0 is a switch's management port
  topology::Guid guid = 0;  // port GUID
  topology::Lid lid = 0;    // base LID (a switch's is on port 0)
  int peer = -1;            // index into Discovery::nodes, -1 when not cabled
  int peer_port = 0;
};

struct DiscoveredNode {
  NodeType type = NodeType::kCa;
  topology::Guid guid = 0;  // node GUID
  std::string description;  // NodeDescription as the node answered it
  int num_ports = 0;        // NodeInfo's port count
  // The directed route discovery reached it by ("0,1,4"; "" when unknown): how to read a
  // switch whose tables may not route to it.
  std::string path;
  std::vector<DiscoveredPort> ports;  // the ports seen, any order
};

struct Discovery {
  std::vector<DiscoveredNode> nodes;
  int from_node = -1;  // the node discovery started from (this host's adapter), -1: unknown
  int from_port = 0;
};

// Switches first, then CAs and routers, each in node GUID order (whatever order discovery met
// them in), ports indexed by number. A node without a description is named like
// ibnetdiscover's ids ("S-<guid>", "H-<guid>"). Throws DiscoveryError.
topology::Fabric to_fabric(const Discovery& discovery);

// The port GUID discovery started from (0 when unknown): the port laas-sdn runs on.
topology::Guid local_port_guid(const Discovery& discovery);

}  // namespace laas::sdn

// laas-sdn's fabric discovery by directed route, over one MAD port that the daemon keeps for
// its whole life (sdn/mad_port.h). Not libibnetdisc: ibnd_discover_fabric opens and closes
// ports of its own at every call, and a port cannot be handed to it. Under ibsim's umad2sim
// that breaks a long-lived daemon twice over: umad2sim delivers a reply to the port that
// registered its management class last (a port kept open stops hearing once another opened
// and closed), and its close frees only one of a port's two agents (32 per device: the 32nd
// open fails "client_register for mgmt 129 failed"). Pure logic over SmpSource; the SMPs are
// at the edge.
#pragma once

#include <string>

#include "sdn/discovery.h"

namespace laas::sdn {

struct SmpNodeInfo {
  NodeType type = NodeType::kCa;
  topology::Guid node_guid = 0;
  topology::Guid port_guid = 0;  // of the port the SMP entered by (a switch: its port 0)
  int num_ports = 0;
  int local_port = 0;  // the port the SMP entered by (a switch reached from itself: 0)
};

struct SmpPortInfo {
  topology::Lid lid = 0;  // a switch's LID on its port 0, a CA's on its own port
  bool link_up = false;   // physical state LinkUp: a cable to follow
};

// What discovery asks of the fabric, each by directed route ("0", "0,1", "0,1,4": the format
// of libibmad's str2drpath). Each throws std::runtime_error when the node does not answer.
class SmpSource {
 public:
  virtual ~SmpSource() = default;
  virtual SmpNodeInfo node_info(const std::string& path) = 0;
  virtual std::string node_description(const std::string& path) = 0;
  virtual SmpPortInfo port_info(const std::string& path, int port) = 0;
};

// Breadth first from the local port: every switch's LinkUp ports followed, CAs recorded and
// not passed through, a node met again (by node GUID) only cabled. A node past a cable that
// does not answer is left out, as libibnetdisc leaves it (`unanswered` counts them); the local
// node not answering throws std::runtime_error. At most `max_hops` hops (directed routes
// carry 63).
Discovery discover_by_route(SmpSource& smp, int* unanswered = nullptr, int max_hops = 63);

}  // namespace laas::sdn

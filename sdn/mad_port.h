// The edge that talks to the fabric: one local MAD port (libibmad over libibumad) that
// laas-sdn opens once and keeps for its life, reopening it only when it stops answering. By
// directed route: it discovers the fabric (SmpSource, sdn/route_discover.h), learns the master
// SM's LID, and reads forwarding tables back from the switches (a LinearForwardingTable Get
// per block of 64 LIDs) so laas-sdn can say whether the SM applied the file it wrote. A switch
// is reached whatever the tables being checked say (by LID, a switch whose table is empty cuts
// off those behind).
#pragma once

#include <cstddef>
#include <string>

#include "routing/routing.h"
#include "sdn/route_discover.h"
#include "topology/fabric.h"

struct ibmad_port;

namespace laas::sdn {

struct MadPortOptions {
  std::string ca;           // the local adapter ("": the first)
  int port = 0;             // its port (0: the first active)
  unsigned timeout_ms = 0;  // per SMP (0: libibmad's default)
  int attempts = 4;         // per SMP: a loaded fabric loses a MAD now and then
};

class MadPort : public SmpSource {
 public:
  // Opens the local port with the two SMP classes; throws std::runtime_error when it cannot.
  explicit MadPort(const MadPortOptions& options = {});
  // Unregisters both agents before closing: the kernel would on close, ibsim's umad2sim frees
  // only one, and a daemon that reopens its port would leak the other each time.
  ~MadPort() override;
  MadPort(const MadPort&) = delete;
  MadPort& operator=(const MadPort&) = delete;

  // "ca (first adapter) port 0": for log lines.
  std::string describe() const;

  // Entries 0..top of the switch at the end of directed route `path` ("0,1,4", as
  // DiscoveredNode::path); throws std::runtime_error naming the path and block that did not
  // answer.
  routing::LidTable read(const std::string& path, std::size_t top);
  // The master SM's LID as the local port's PortInfo says it (0: none known): the SM whose LIDs
  // laas-sdn takes and whose port is management; `lmc` gets the port's LMC. Throws
  // std::runtime_error: the local port itself does not answer.
  unsigned master_sm_lid(int* lmc = nullptr);

  SmpNodeInfo node_info(const std::string& path) override;
  std::string node_description(const std::string& path) override;
  SmpPortInfo port_info(const std::string& path, int port) override;

 private:
  // One SMP Get by directed route, `attempts` times; throws naming what did not answer.
  void query(const std::string& path, unsigned attribute, unsigned modifier, void* data,
             const char* what);

  MadPortOptions options_;
  ibmad_port* port_ = nullptr;
};

}  // namespace laas::sdn

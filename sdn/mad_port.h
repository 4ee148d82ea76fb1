// The edge that talks to the fabric: one local MAD port (libibmad over libibumad) that
// laas-sdn opens once and keeps for its life, reopening it only when it stops answering. By
// directed route: it says where the local port is (its NodeInfo), learns the master SM's LID,
// and reads forwarding tables back from the switches (a LinearForwardingTable Get
// per block of 64 LIDs) so laas-sdn can say whether the SM applied the file it wrote. A switch
// is reached whatever the tables being checked say (by LID, a switch whose table is empty cuts
// off those behind). The fabric itself is discovered by ibnetdiscover in a child process
// (sdn/discovery.h): libibnetdisc cannot be handed this port.
#pragma once

#include <cstddef>
#include <string>

#include "routing/routing.h"
#include "sdn/discovery.h"
#include "topology/fabric.h"

struct ibmad_port;

namespace laas::sdn {

struct MadPortOptions {
  std::string ca;           // the local adapter ("": the first)
  int port = 0;             // its port (0: the first active)
  unsigned timeout_ms = 0;  // per SMP (0: libibmad's default)
  int attempts = 4;         // per SMP: a loaded fabric loses a MAD now and then
};

class MadPort {
 public:
  // Opens the local port with the two SMP classes; throws std::runtime_error when it cannot.
  explicit MadPort(const MadPortOptions& options = {});
  // Unregisters both agents before closing: the kernel would on close, ibsim's umad2sim frees
  // only one, and a daemon that reopens its port would leak the other each time.
  ~MadPort();
  MadPort(const MadPort&) = delete;
  MadPort& operator=(const MadPort&) = delete;

  // "ca (first adapter) port 0": for log lines.
  std::string describe() const;

  // Entries 0..top of the switch at the end of directed route `path` ("0,1,4", as
  // sdn::switch_routes gives); throws std::runtime_error naming the path and block that did not
  // answer.
  routing::LidTable read(const std::string& path, std::size_t top);
  // The master SM's LID as the local port's PortInfo says it (0: none known): the SM whose LIDs
  // laas-sdn takes and whose port is management; `lmc` gets the port's LMC. Throws
  // std::runtime_error: the local port itself does not answer.
  unsigned master_sm_lid(int* lmc = nullptr);

  // The local port's NodeInfo: where discovery's routes start. Throws std::runtime_error.
  LocalPort local();

 private:
  // One SMP Get by directed route, `attempts` times; throws naming what did not answer.
  void query(const std::string& path, unsigned attribute, unsigned modifier, void* data,
             const char* what);

  MadPortOptions options_;
  ibmad_port* port_ = nullptr;
};

}  // namespace laas::sdn

// The edge that reads forwarding tables back from the switches themselves (libibmad, a
// LinearForwardingTable Get per block of 64 LIDs), so laas-sdn can say whether the SM applied
// the file it wrote without running dump_fts. By directed route: a switch is reached whatever
// the tables being checked say (by LID, a switch whose table is empty cuts off those behind).
#pragma once

#include <cstddef>
#include <string>

#include "routing/routing.h"
#include "topology/fabric.h"

struct ibmad_port;

namespace laas::sdn {

struct LftReadOptions {
  std::string ca;           // the local adapter ("": the first)
  int port = 0;             // its port (0: the first active)
  unsigned timeout_ms = 0;  // per SMP (0: libibmad's default)
  int attempts = 4;         // per block: a loaded fabric loses a MAD now and then
};

class LftReader {
 public:
  // Opens the local port; throws std::runtime_error when it cannot.
  explicit LftReader(const LftReadOptions& options = {});
  ~LftReader();
  LftReader(const LftReader&) = delete;
  LftReader& operator=(const LftReader&) = delete;

  // Entries 0..top of the switch at the end of directed route `path` ("0,1,4", as
  // DiscoveredNode::path); throws std::runtime_error naming the path and block that did not
  // answer.
  routing::LidTable read(const std::string& path, std::size_t top);
  // The master SM's LID as the local port's PortInfo says it (0: none known): the SM whose LIDs
  // laas-sdn takes and whose port is management; `lmc` gets the port's LMC. Throws
  // std::runtime_error.
  unsigned master_sm_lid(int* lmc = nullptr);

 private:
  LftReadOptions options_;
  ibmad_port* port_ = nullptr;
};

}  // namespace laas::sdn

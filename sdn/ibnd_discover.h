// The edge that reads a live fabric: libibnetdisc (directed-route SMPs through libibumad) from
// one of this host's ports, into plain records (sdn/discovery.h). Nothing else of the project
// includes libibnetdisc.
#pragma once

#include <string>

#include "sdn/discovery.h"

namespace laas::sdn {

struct DiscoverOptions {
  std::string ca;           // the local adapter ("" : the first one with an active port)
  int port = 0;             // its port (0: the first active one)
  unsigned timeout_ms = 0;  // per SMP (0: libibmad's default)
  unsigned retries = 0;     // per SMP (0: libibmad's default)
};

// Throws std::runtime_error when the fabric cannot be read (no adapter, no answer).
Discovery discover_fabric(const DiscoverOptions& options = {});

}  // namespace laas::sdn

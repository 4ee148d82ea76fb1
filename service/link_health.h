// The health of a tenant's links (issue 23): port error counters as OpenSM's performance
// manager reports them (differences since its last reading), summed per switch port, and the
// ports an administrator's error threshold isolates -- handled as faults, as UFM isolates
// high-BER ports -- until they stay clean for a number of readings. A pure model.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "topology/fabric.h"

namespace laas::service {

struct PortCounters {
  std::uint64_t symbol_errors = 0;
  std::uint64_t link_error_recovery = 0;
  std::uint64_t link_downed = 0;
  std::uint64_t rcv_errors = 0;
  std::uint64_t rcv_remote_physical_errors = 0;
  std::uint64_t local_link_integrity_errors = 0;
  std::uint64_t excessive_buffer_overruns = 0;
  std::uint64_t xmit_discards = 0;
  std::uint64_t xmit_wait = 0;  // congestion, not an error
  // The errors the threshold counts: those of a bad cable or port, not congestion.
  std::uint64_t errors() const {
    return symbol_errors + link_error_recovery + link_downed + rcv_errors +
           rcv_remote_physical_errors + local_link_integrity_errors + excessive_buffer_overruns;
  }
  void add(const PortCounters& d);
};

using PortKey = std::pair<topology::Guid, int>;  // switch node GUID, physical port

class LinkHealth {
 public:
  // threshold: errors in one reading that isolate a port (0: never); clean: readings without
  // errors after which an isolated port returns.
  LinkHealth(std::uint64_t threshold = 0, int clean = 3) : threshold_(threshold), clean_(clean) {}
  // Adds one reading; true when the port's isolation changed.
  bool add(const PortKey& port, const PortCounters& delta);
  const std::map<PortKey, PortCounters>& totals() const { return totals_; }
  bool isolated(const PortKey& port) const { return isolated_.count(port) > 0; }
  std::vector<PortKey> isolated_ports() const;
  std::uint64_t threshold() const { return threshold_; }

 private:
  std::uint64_t threshold_;
  int clean_;
  std::map<PortKey, PortCounters> totals_;
  std::map<PortKey, int> isolated_;  // -> clean readings since
};

}  // namespace laas::service

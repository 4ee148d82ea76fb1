// The health of a tenant's links: port error counters as OpenSM's performance
// manager reports them (differences since its last reading), summed per switch port, and the
// ports an administrator's error threshold isolates -- handled as faults, as UFM isolates
// high-BER ports -- until they stay clean for a number of readings. A pure model.
//
// The readings are not trusted: anyone who may send a PMA Set to a switch (a tenant's root on
// its own leaf, `perfquery -R`) or reboot it resets its counters, and perfmgr reports the reset
// as a difference near 2^64. A difference wider than its counter is therefore a reset, never
// errors; sums saturate instead of wrapping; and one bad reading alone isolates nothing.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "topology/fabric.h"

namespace laas::service {

// a + b, or UINT64_MAX when the sum does not fit.
std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b);

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
  std::uint64_t errors() const;
  void add(const PortCounters& d);
  // Zeroes every difference larger than its PortCounters field can hold (a counter reset);
  // true when there was one.
  bool drop_resets();
};

using PortKey = std::pair<topology::Guid, int>;  // switch node GUID, physical port

class LinkHealth {
 public:
  // threshold: errors in one reading that count against a port (0: never isolate);
  // consecutive: readings in a row over the threshold that isolate it; clean: readings without
  // errors after which an isolated port returns.
  explicit LinkHealth(std::uint64_t threshold = 0, int clean = 3, int consecutive = 2)
      : threshold_(threshold), clean_(clean), consecutive_(consecutive) {}
  struct Reading {
    bool changed = false;      // the port's isolation changed
    bool reset = false;        // a counter was reset: its difference counted 0
    std::uint64_t errors = 0;  // the errors this reading counted
  };
  // Adds one reading of a port.
  Reading add(const PortKey& port, PortCounters delta);
  const std::map<PortKey, PortCounters>& totals() const { return totals_; }
  bool isolated(const PortKey& port) const { return isolated_.count(port) > 0; }
  std::vector<PortKey> isolated_ports() const;
  std::uint64_t threshold() const { return threshold_; }
  int consecutive() const { return consecutive_; }
  // Readings of a port that held a counter reset, and of every port.
  std::uint64_t resets(const PortKey& port) const;
  std::uint64_t resets() const { return all_resets_; }

 private:
  // The isolation of a port after one reading that is (or is not) over the threshold.
  bool judge(const PortKey& port, bool bad);

  std::uint64_t threshold_;
  int clean_;
  int consecutive_;
  std::map<PortKey, PortCounters> totals_;
  std::map<PortKey, int> streak_;    // not isolated -> readings in a row over the threshold
  std::map<PortKey, int> isolated_;  // -> clean readings since
  std::map<PortKey, std::uint64_t> resets_;
  std::uint64_t all_resets_ = 0;
};

}  // namespace laas::service

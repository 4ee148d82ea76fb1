#include "service/link_health.h"

#include <limits>

namespace laas::service {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

// The widest difference a counter of `bits` bits can show between two readings.
constexpr std::uint64_t max_of(int bits) { return bits >= 64 ? kMax : (1ull << bits) - 1; }

// A difference wider than its counter cannot be errors: the counter went back (reset), and
// unsigned subtraction made it huge. It counts 0.
bool drop_reset(std::uint64_t& delta, int bits) {
  if (delta <= max_of(bits)) return false;
  delta = 0;
  return true;
}

}  // namespace

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return a > kMax - b ? kMax : a + b;
}

std::uint64_t PortCounters::errors() const {
  std::uint64_t sum = 0;
  for (auto v :
       {symbol_errors, link_error_recovery, link_downed, rcv_errors, rcv_remote_physical_errors,
        local_link_integrity_errors, excessive_buffer_overruns})
    sum = saturating_add(sum, v);
  return sum;
}

void PortCounters::add(const PortCounters& d) {
  symbol_errors = saturating_add(symbol_errors, d.symbol_errors);
  link_error_recovery = saturating_add(link_error_recovery, d.link_error_recovery);
  link_downed = saturating_add(link_downed, d.link_downed);
  rcv_errors = saturating_add(rcv_errors, d.rcv_errors);
  rcv_remote_physical_errors =
      saturating_add(rcv_remote_physical_errors, d.rcv_remote_physical_errors);
  local_link_integrity_errors =
      saturating_add(local_link_integrity_errors, d.local_link_integrity_errors);
  excessive_buffer_overruns =
      saturating_add(excessive_buffer_overruns, d.excessive_buffer_overruns);
  xmit_discards = saturating_add(xmit_discards, d.xmit_discards);
  xmit_wait = saturating_add(xmit_wait, d.xmit_wait);
}

// The widths of the IBA PortCounters attribute. perfmgr may read some from the 64-bit
// PortCountersExtended instead; a reset of those shows as a difference near 2^64 too, and a
// real difference wider than the narrow counter is not a reading perfmgr could take from it.
bool PortCounters::drop_resets() {
  bool reset = false;
  reset |= drop_reset(symbol_errors, 16);
  reset |= drop_reset(link_error_recovery, 8);
  reset |= drop_reset(link_downed, 8);
  reset |= drop_reset(rcv_errors, 16);
  reset |= drop_reset(rcv_remote_physical_errors, 16);
  reset |= drop_reset(local_link_integrity_errors, 4);
  reset |= drop_reset(excessive_buffer_overruns, 4);
  reset |= drop_reset(xmit_discards, 16);
  reset |= drop_reset(xmit_wait, 32);
  return reset;
}

LinkHealth::Reading LinkHealth::add(const PortKey& port, PortCounters delta) {
  Reading r;
  r.reset = delta.drop_resets();
  if (r.reset) {
    resets_[port] = saturating_add(resets_[port], 1);
    all_resets_ = saturating_add(all_resets_, 1);
  }
  r.errors = delta.errors();
  totals_[port].add(delta);
  if (threshold_ != 0) r.changed = judge(port, r.errors >= threshold_);
  return r;
}

// A port is isolated after `consecutive_` bad readings in a row (a clean one starts the count
// over), and returns after `clean_` clean readings in a row (a bad one starts that over).
bool LinkHealth::judge(const PortKey& port, bool bad) {
  auto it = isolated_.find(port);
  if (it == isolated_.end()) {
    if (!bad) {
      streak_.erase(port);
      return false;
    }
    if (++streak_[port] < consecutive_) return false;
    streak_.erase(port);
    isolated_[port] = 0;
    return true;
  }
  if (bad) {
    it->second = 0;
    return false;
  }
  if (++it->second < clean_) return false;
  isolated_.erase(it);
  return true;
}

std::uint64_t LinkHealth::resets(const PortKey& port) const {
  const auto it = resets_.find(port);
  return it == resets_.end() ? 0 : it->second;
}

std::vector<PortKey> LinkHealth::isolated_ports() const {
  std::vector<PortKey> out;
  for (const auto& [port, clean] : isolated_) out.push_back(port);
  return out;
}

}  // namespace laas::service

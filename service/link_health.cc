#include "service/link_health.h"

namespace laas::service {

void PortCounters::add(const PortCounters& d) {
  symbol_errors += d.symbol_errors;
  link_error_recovery += d.link_error_recovery;
  link_downed += d.link_downed;
  rcv_errors += d.rcv_errors;
  rcv_remote_physical_errors += d.rcv_remote_physical_errors;
  local_link_integrity_errors += d.local_link_integrity_errors;
  excessive_buffer_overruns += d.excessive_buffer_overruns;
  xmit_discards += d.xmit_discards;
  xmit_wait += d.xmit_wait;
}

bool LinkHealth::add(const PortKey& port, const PortCounters& delta) {
  totals_[port].add(delta);
  if (threshold_ == 0) return false;
  const bool bad = delta.errors() >= threshold_;
  auto it = isolated_.find(port);
  if (it == isolated_.end()) {
    if (!bad) return false;
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

std::vector<PortKey> LinkHealth::isolated_ports() const {
  std::vector<PortKey> out;
  for (const auto& [port, clean] : isolated_) out.push_back(port);
  return out;
}

}  // namespace laas::service

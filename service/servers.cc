// TenantService and servers: a tenant holds whole servers. The service groups the
// tree's host ports by server at each new view; on a fabric where some server has several
// ports, requests count servers, explicit host lists name servers, reservations and the
// placement take every port of a server or none.
#include <algorithm>
#include <set>

#include "service/state_store.h"
#include "service/tenant_service.h"

namespace laas::service {

using nlohmann::json;

void TenantService::group_servers() {
  st_.servers = topology::group_servers(st_.view->tree, st_.view->embedding, st_.view->fabric,
                                        &st_.view->known(), st_.config.servers);
  // Rail by rail: a tenant's servers are checked per rail (one remainder leaf on each).
  if (st_.cluster) st_.cluster->set_leaf_rails(topology::rail_of_leaf(st_.view->tree, st_.servers));
}

std::vector<topology::HostId> TenantService::whole_servers(
    const std::vector<topology::HostId>& hosts) const {
  if (!st_.servers.multi_port()) return hosts;
  std::vector<topology::HostId> out;
  for (auto h : hosts) {
    const auto& ports = st_.servers.ports[st_.servers.server_of[h]];
    out.insert(out.end(), ports.begin(), ports.end());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void TenantService::one_host_per_server(std::vector<exports::TenantRecord>& records) const {
  if (!st_.servers.multi_port()) return;
  for (auto& r : records) {
    std::vector<exports::Endpoint> hosts;
    std::vector<int> seen;
    for (const auto& h : r.hosts) {
      const auto id = st_.view->host_by_guid(h.guid);
      const int s = id ? st_.servers.server_of[*id] : -1;
      if (s >= 0 && std::find(seen.begin(), seen.end(), s) != seen.end()) continue;
      if (s >= 0) seen.push_back(s);
      hosts.push_back(h);
      if (s >= 0) hosts.back().name = st_.servers.names[s];
    }
    r.hosts = std::move(hosts);
  }
}

void TenantService::one_leaf_per_server(exports::TreeRecord& tree) const {
  if (!st_.servers.multi_port()) return;
  std::set<topology::Guid> dropped;
  std::vector<exports::SwitchRecord> kept;
  for (auto sw : tree.switches) {
    if (sw.level == 1) {
      std::vector<exports::Endpoint> down;
      for (auto d : sw.down) {
        const auto id = st_.view->host_by_guid(d.guid);
        if (id && st_.servers.ports[st_.servers.server_of[*id]].front() != *id) continue;
        if (id) d.name = st_.servers.names[st_.servers.server_of[*id]];
        down.push_back(std::move(d));
      }
      sw.down = std::move(down);
      if (sw.down.empty()) {
        dropped.insert(sw.guid);
        continue;
      }
    } else {
      sw.down.erase(
          std::remove_if(sw.down.begin(), sw.down.end(),
                         [&](const exports::Endpoint& d) { return dropped.count(d.guid); }),
          sw.down.end());
    }
    kept.push_back(std::move(sw));
  }
  tree.switches = std::move(kept);
}

}  // namespace laas::service

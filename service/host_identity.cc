#include "service/host_identity.h"

namespace laas::service {

std::vector<UnacceptedHost> find_unaccepted(const std::vector<PersistedTenant>& tenants,
                                            const PhysicalIds& ids) {
  std::vector<UnacceptedHost> out;
  for (const auto& t : tenants)
    for (const auto& recorded : t.hosts) {
      if (!recorded.leaf_guid || !recorded.guid) continue;  // version 1, or never seen
      const auto h = ids.host_at(recorded.leaf_guid, recorded.port);
      if (!h || !ids.host_present(*h)) continue;  // not in this tree, or down
      const PersistedHost now = ids.host(*h);
      if (!now.guid || now.guid == recorded.guid) continue;
      out.push_back({t.name, *h, recorded.leaf_guid, recorded.port, recorded.guid, recorded.name,
                     now.guid, now.name});
    }
  return out;
}

std::string describe(const UnacceptedHost& q, const std::string& leaf_name) {
  auto named = [](topology::Guid g, const std::string& name) {
    return guid_hex(g) + (name.empty() ? "" : " ('" + name + "')");
  };
  return "tenant '" + q.tenant + "': slot " + leaf_name + " port " + std::to_string(q.port) +
         " holds " + named(q.seen_guid, q.seen_name) + ", not the recorded " +
         named(q.recorded_guid, q.recorded_name);
}

}  // namespace laas::service

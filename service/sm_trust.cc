// Which subnet managers are management: the administrator's word only. This OpenSM, the SMs
// laas.yaml lists (`subnet_managers:`), and those accepted with `laasctl sm accept` (or that took
// the shared state over as master: they run this plugin on the administrator's state
// directory). Any other SM is what its port already was -- a tenant's host stays the tenant's,
// a free host stays free -- since root on a rented server can start an OpenSM and answer SMInfo;
// it is named at every routing run, in status, the metrics and the audit until someone decides.
#include "service/sm_trust.h"

#include <algorithm>

#include "service/request_params.h"
#include "service/service_metrics.h"

namespace laas::service {

using nlohmann::json;

std::vector<topology::Guid> SmTrust::sm_ports() const {
  std::lock_guard<std::mutex> lock(st_.mu);
  return trusted_sm_ports();
}

std::vector<topology::Guid> SmTrust::trusted_sm_ports() const {
  std::vector<topology::Guid> ports = st_.persisted.sm_ports;
  ports.insert(ports.end(), st_.config.subnet_managers.begin(), st_.config.subnet_managers.end());
  if (st_.sm.self_sm_port) ports.push_back(st_.sm.self_sm_port);
  std::sort(ports.begin(), ports.end());
  ports.erase(std::unique(ports.begin(), ports.end()), ports.end());
  return ports;
}

std::vector<SmSeen> SmTrust::note_subnet_managers(topology::Guid self, std::vector<SmSeen> seen) {
  std::lock_guard<std::mutex> lock(st_.mu);
  st_.sm.self_sm_port = self;
  // A routing run knows names and LIDs, the plugin's look the SMInfo states: keep those.
  for (auto& sm : seen)
    for (const auto& before : st_.sm.seen_sms)
      if (before.guid == sm.guid && sm.role == SmState::kUnknown) {
        sm.role = before.role;
        sm.priority = before.priority;
      }
  st_.sm.seen_sms = std::move(seen);
  const auto unaccepted = unaccepted_sms();
  if (unaccepted.size() != st_.sm.unaccepted_sms) {
    st_.sm.unaccepted_sms = unaccepted.size();
    metrics_.write_metrics_file();
  }
  return unaccepted;
}

bool SmTrust::trusted(topology::Guid guid) const {
  const auto ports = trusted_sm_ports();
  return guid && std::binary_search(ports.begin(), ports.end(), guid);
}

std::vector<SmSeen> SmTrust::unaccepted_sms() const {
  const auto ports = trusted_sm_ports();
  std::vector<SmSeen> out;
  for (const auto& sm : st_.sm.seen_sms)
    if (sm.guid && !std::binary_search(ports.begin(), ports.end(), sm.guid)) out.push_back(sm);
  return out;
}

namespace {

// What the log says when the master or its trust changes.
std::string master_change_line(const SmRole& role, bool trusted) {
  if (!role.master || !role.master->port_guid)
    return "laas: no master SM is known to this SM (" + role.name() +
           "): nobody this service trusts holds the fabric";
  if (trusted)
    return "laas: the master SM is " + role.master->text() + " (trusted" +
           (role.state == SmState::kMaster ? ", this SM)" : ")");
  return "laas: the master SM is " + role.master->text() +
         ", which NOBODY TRUSTS (laas.yaml's subnet_managers does not list it and nobody "
         "accepted it): it outranked the trusted SMs in OpenSM's election (a higher priority, "
         "or the same priority and a lower port GUID, with the same SM_Key) and now programs the "
         "switches and answers SA queries. Stop it on its host, set an sm_key in opensm.conf "
         "(docs/security.md); this SM stays " +
         role.name() + " until it leaves";
}

}  // namespace

void SmTrust::note_fabric_sms(const SmRole& role, std::vector<SmSeen> seen) {
  std::lock_guard<std::mutex> lock(st_.mu);
  if (role.self.port_guid) st_.sm.self_sm_port = role.self.port_guid;
  // Names and LIDs of a routing run stay where the plugin's look has none.
  for (auto& sm : seen)
    for (const auto& before : st_.sm.seen_sms)
      if (before.guid == sm.guid) {
        if (sm.name.empty()) sm.name = before.name;
        if (!sm.lid) sm.lid = before.lid;
      }
  st_.sm.seen_sms = std::move(seen);
  const std::size_t unaccepted = unaccepted_sms().size();
  const bool master_trusted = role.master && trusted(role.master->port_guid);
  const auto guid_of = [](const std::optional<SmIdentity>& id) -> topology::Guid {
    return id ? id->port_guid : 0;
  };
  const bool master_changed = guid_of(role.master) != guid_of(st_.sm.fabric_master) ||
                              master_trusted != st_.sm.master_trusted;
  const bool changed = master_changed || unaccepted != st_.sm.unaccepted_sms;
  st_.sm.fabric_master = role.master;
  st_.sm.master_trusted = master_trusted;
  st_.sm.unaccepted_sms = unaccepted;
  if (master_changed)
    st_.log(
        master_trusted || role.state == SmState::kDiscovering ? LogLevel::kInfo : LogLevel::kError,
        master_change_line(role, master_trusted));
  if (changed) metrics_.write_metrics_file();
}

std::string SmTrust::sm_state(topology::Guid guid) const {
  if (guid == st_.sm.self_sm_port) return "this";
  if (std::find(st_.config.subnet_managers.begin(), st_.config.subnet_managers.end(), guid) !=
      st_.config.subnet_managers.end())
    return "listed";
  if (std::find(st_.persisted.sm_ports.begin(), st_.persisted.sm_ports.end(), guid) !=
      st_.persisted.sm_ports.end())
    return "accepted";
  return "unaccepted";
}

json SmTrust::sm_list() const {
  std::lock_guard<std::mutex> lock(st_.mu);
  json list = json::array();
  std::vector<topology::Guid> shown;
  const topology::Guid master = st_.sm.fabric_master ? st_.sm.fabric_master->port_guid : 0;
  for (const auto& sm : st_.sm.seen_sms) {
    json entry = {{"guid", guid_hex(sm.guid)},
                  {"name", sm.name},
                  {"lid", sm.lid},
                  {"seen", true},
                  {"state", sm_state(sm.guid)},
                  {"trusted", trusted(sm.guid)}};
    // The master OpenSM follows is master whatever its last SMInfo said (a standby polls only
    // its master: the others' states are as old as the last sweep that saw them).
    entry["role"] = sm.guid == master ? "master" : sm_state_name(sm.role);
    if (sm.priority >= 0) entry["priority"] = sm.priority;
    list.push_back(std::move(entry));
    shown.push_back(sm.guid);
  }
  // Trusted SMs not seen now (a standby that is down) are listed too: they keep their trust.
  for (auto g : trusted_sm_ports())
    if (std::find(shown.begin(), shown.end(), g) == shown.end())
      list.push_back({{"guid", guid_hex(g)},
                      {"seen", false},
                      {"state", sm_state(g)},
                      {"trusted", true},
                      {"role", "unknown"}});
  return list;
}

json SmTrust::sm_change(const json& params, const Caller& caller, bool accept) {
  const int wait = wait_ms(st_, params);
  const std::string text = get_string(params, "guid");
  topology::Guid guid;
  try {
    guid = parse_guid(text);
  } catch (const std::invalid_argument& e) {
    fail(error::kBadRequest, std::string("field 'guid': ") + e.what());
  }
  std::unique_lock<std::mutex> lock(st_.mu);
  if (!caller.may_write)
    fail(error::kPermission,
         "uid " + std::to_string(caller.uid) + " may read but not change which SMs are trusted");
  if (!st_.condition.blocked.empty()) fail(error::kUnavailable, st_.condition.blocked);
  auto& ports = st_.persisted.sm_ports;
  const bool held = std::find(ports.begin(), ports.end(), guid) != ports.end();
  if (accept && held) fail(error::kDuplicate, "SM port " + guid_hex(guid) + " is accepted already");
  if (!accept && !held) {
    const std::string state = sm_state(guid);
    fail(error::kNotFound, "SM port " + guid_hex(guid) + " is not an accepted SM" +
                               (state == "listed" ? " (laas.yaml lists it: remove it there)"
                                : state == "this" ? " (it is this SM)"
                                                  : ""));
  }
  const auto saved = ports;
  if (accept)
    ports.push_back(guid);
  else
    ports.erase(std::find(ports.begin(), ports.end(), guid));
  std::sort(ports.begin(), ports.end());
  ++st_.persisted.generation;
  bool partitions_changed = false;
  std::string not_durable;
  try {
    partitions_changed = lifecycle_.commit(&not_durable);
  } catch (const RequestError& e) {
    ports = saved;
    --st_.persisted.generation;
    fail(e.code.c_str(), std::string("SM trust not changed: ") + e.message);
  }
  // Management hosts are part of the topology view: the next routing run derives them anew.
  st_.log(LogLevel::kInfo, "laas: uid " + std::to_string(caller.uid) +
                               (accept ? " accepted" : " forgot") + " subnet manager port " +
                               guid_hex(guid) +
                               (accept ? ": its host is management from the next routing run"
                                       : ": no longer management from the next routing run"));
  return lifecycle_.finish_change(lock, partitions_changed, not_durable,
                                  accept ? "the SM IS accepted (state.json records it)"
                                         : "the SM IS forgotten (state.json no longer lists it)",
                                  {{"guid", guid_hex(guid)}, {"state", sm_state(guid)}}, wait);
}

}  // namespace laas::service

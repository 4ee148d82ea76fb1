#include "service/sm_role.h"

#include <nlohmann/json.hpp>

#include "service/state_store.h"

namespace laas::service {

std::string SmIdentity::text() const {
  std::string out = guid_hex(port_guid);
  if (!name.empty()) out += " '" + name + "'";
  if (lid) out += " LID " + std::to_string(lid);
  return out;
}

SmState sm_state_from_sminfo(int value) {
  switch (value) {
    case 0:
      return SmState::kNotActive;
    case 1:
      return SmState::kDiscovering;
    case 2:
      return SmState::kStandby;
    case 3:
      return SmState::kMaster;
    default:
      return SmState::kUnknown;
  }
}

std::string sm_state_name(SmState state) {
  switch (state) {
    case SmState::kNotActive:
      return "not-active";
    case SmState::kDiscovering:
      return "discovering";
    case SmState::kStandby:
      return "standby";
    case SmState::kMaster:
      return "master";
    case SmState::kUnknown:
      break;
  }
  return "unknown";
}

std::string SmRole::name() const { return sm_state_name(state); }

std::string SmRole::refusal() const {
  std::string out = "this SM";
  if (self.port_guid) out += " (" + self.text() + ")";
  out += " is " + name() + ", not the master: tenant changes are made at the master SM";
  if (master && master->port_guid && master->port_guid != self.port_guid)
    out += " " + master->text();
  else if (state == SmState::kDiscovering)
    out += "; this SM is sweeping the fabric and may become master: try again in a few seconds";
  else
    out += "; no master is known to this SM";
  return out;
}

nlohmann::json sm_identity_json(const SmIdentity& id) {
  nlohmann::json j = {{"guid", guid_hex(id.port_guid)}, {"name", id.name}, {"lid", id.lid}};
  if (id.priority >= 0) j["priority"] = id.priority;
  return j;
}

nlohmann::json SmRole::to_json() const {
  nlohmann::json j = {{"role", name()}, {"self", sm_identity_json(self)}};
  j["master"] = master ? sm_identity_json(*master) : nlohmann::json(nullptr);
  return j;
}

}  // namespace laas::service

// The role of the subnet manager this service runs beside. Every production fabric runs a
// master and one or more standby SMs, each with the plugin, all on one tenant truth (the
// shared state directory): only the master changes tenants; the others answer from the shared
// state and name the master. The plugin reads the role from OpenSM (SMInfo); this unit knows
// nothing of OpenSM.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "topology/fabric.h"

namespace laas::service {

// As SMInfo's SMState field says it (IBA 14.4.1): NOTACTIVE 0, DISCOVERING 1, STANDBY 2,
// MASTER 3.
enum class SmState { kNotActive = 0, kDiscovering = 1, kStandby = 2, kMaster = 3, kUnknown = 4 };

// An SM as SMInfo and the subnet database name it.
struct SmIdentity {
  topology::Guid port_guid = 0;
  std::string name;          // its node's description ("" when not discovered)
  std::uint16_t lid = 0;     // its base LID (0: not known)
  int priority = -1;         // its SMInfo priority (-1: not known)
  std::string text() const;  // "0x0002c90000000102 'sm-a' LID 2"
};

struct SmRole {
  // No SM in the process (tests, offline tools) is a master: it owns its state directory.
  SmState state = SmState::kMaster;
  SmIdentity self;
  std::optional<SmIdentity> master;  // the master this SM knows of (itself when master)

  bool may_change_tenants() const { return state == SmState::kMaster; }
  // "master", "standby", "discovering", "not-active", "unknown".
  std::string name() const;
  // Why a tenant change is refused here, naming the master (or saying none is known).
  std::string refusal() const;
  nlohmann::json to_json() const;
};

SmState sm_state_from_sminfo(int value);
nlohmann::json sm_identity_json(const SmIdentity& id);  // guid, name, lid, priority
std::string sm_state_name(SmState state);

}  // namespace laas::service

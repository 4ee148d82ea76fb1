// Drained links and switches in state.json: two optional arrays, written only when they hold
// something, so a file without maintenance reads and writes as before.
#include <set>
#include <stdexcept>

#include "service/state_store.h"

namespace laas::service {

namespace {

void parse_list(const nlohmann::json& doc, const char* field, bool links,
                std::vector<PersistedFabricDrain>& out) {
  if (!doc.contains(field)) return;
  std::set<std::pair<topology::Guid, int>> seen;
  const std::string what = links ? "drained link" : "drained switch";
  for (const auto& d : doc.at(field)) {
    PersistedFabricDrain one;
    one.guid = parse_guid(d.at(links ? "switch" : "guid").get<std::string>());
    if (one.guid == 0) throw std::invalid_argument("a " + what + " has node GUID 0");
    if (links) {
      one.port = d.at("port").get<int>();
      if (one.port <= 0 || one.port > 254)
        throw std::invalid_argument("a drained link of switch " + guid_hex(one.guid) +
                                    " has port " + std::to_string(one.port));
    }
    if (!seen.insert({one.guid, one.port}).second)
      throw std::invalid_argument(what + " " + guid_hex(one.guid) +
                                  (links ? " port " + std::to_string(one.port) : "") +
                                  " is drained twice");
    one.reason = d.at("reason").get<std::string>();
    one.name = d.value("name", "");
    one.by = d.value("by", "");
    one.at = d.value("at", "");
    out.push_back(std::move(one));
  }
}

nlohmann::json write_list(const std::vector<PersistedFabricDrain>& list, bool links) {
  auto out = nlohmann::json::array();
  for (const auto& d : list) {
    nlohmann::json one = {{links ? "switch" : "guid", guid_hex(d.guid)}};
    if (links) one["port"] = d.port;
    one["name"] = d.name;
    one["reason"] = d.reason;
    one["by"] = d.by;
    one["at"] = d.at;
    out.push_back(std::move(one));
  }
  return out;
}

}  // namespace

void parse_fabric_drains(const nlohmann::json& doc, PersistedState& state) {
  parse_list(doc, "drained_links", true, state.drained_links);
  parse_list(doc, "drained_switches", false, state.drained_switches);
}

void write_fabric_drains(const PersistedState& state, nlohmann::json& doc) {
  if (!state.drained_links.empty()) doc["drained_links"] = write_list(state.drained_links, true);
  if (!state.drained_switches.empty())
    doc["drained_switches"] = write_list(state.drained_switches, false);
}

}  // namespace laas::service

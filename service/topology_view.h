// The fabric as the service sees it at one routing run: the recognized tree, the discovered
// graph it sits on, and the mapping between them. Immutable once built; shared by pointer.
//
// The tree is the intended one: hosts, links and switches may be absent. Every
// lookup works for absent parts too -- by (switch GUID, physical port) and, with the recorded
// layout, by the GUID and name a host or switch had when last seen.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>

#include "routing/owners.h"
#include "topology/embedding.h"
#include "topology/layout.h"

namespace laas::service {

struct TopologyView {
  // `known` (optional) is the recorded layout: names and GUIDs of parts now absent.
  TopologyView(topology::FatTree t, topology::Fabric f, topology::Embedding e,
               std::vector<topology::HostId> management = {}, topology::Layout known = {});

  topology::FatTree tree;
  topology::Fabric fabric;
  topology::Embedding embedding;
  std::vector<topology::HostId> management_hosts;  // never allocated to tenants
  // Port GUIDs of management hosts and shared services cabled outside the tree's slots
  // (Embedding::attached): full members of every tenant partition, like those above.
  std::vector<topology::Guid> outside_members;

  // GUID of the host's cabled port; for an absent host the GUID last seen in its slot (0 when
  // never seen).
  topology::Guid host_guid(topology::HostId host) const;
  std::string host_name(topology::HostId host) const;
  // The name the slot's port had when its GUID was first recorded (layout.json), else its
  // description now. Requests name hosts by it: a host's root sets its own description and must
  // not take another host's name, an absent one's least of all.
  std::string recorded_name(topology::HostId host) const;
  topology::Lid host_lid(topology::HostId host) const;  // 0 when absent
  std::optional<topology::HostId> host_by_guid(topology::Guid port_guid) const;
  std::optional<topology::HostId> host_by_name(const std::string& name) const;  // recorded
  // A host slot by its physical identity: (leaf switch GUID, leaf port); absent hosts too.
  std::optional<topology::HostId> host_by_slot(topology::Guid leaf_guid, int port) const;
  std::pair<topology::Guid, int> slot_of_host(topology::HostId host) const;
  // A model switch's node (a stand-in with its recorded GUID and name when it is absent), and
  // the physical port of one of its model ports (the intended one for absent parts).
  const topology::FabricNode& switch_node(int level, int index) const;
  int physical_port(int level, int index, int model_port) const;
  // The model up-link that leaves switch `guid` on physical port `port` (absent ones too).
  std::optional<topology::LinkId> link_by_port(topology::Guid switch_guid, int port) const;

  // The recorded layout this view names absent parts by (empty when none fits the tree).
  const topology::Layout& known() const { return known_; }

  // What is down now.
  bool host_present(topology::HostId host) const { return embedding.host_node.at(host) >= 0; }
  bool switch_present(int level, int index) const {
    return embedding.switch_node.at(level - 1).at(index) >= 0;
  }
  bool link_present(topology::LinkId link) const;
  int down_hosts() const { return static_cast<int>(embedding.missing_hosts.size()); }
  // Links uncabled by design (Embedding::uncabled) are not down.
  int down_links() const {
    return static_cast<int>(embedding.missing_links.size() - embedding.uncabled.size());
  }
  int uncabled_links() const { return static_cast<int>(embedding.uncabled.size()); }
  int down_switches() const { return static_cast<int>(embedding.missing_switches.size()); }

  // Identifies the cabling: equal fingerprints mean model ids map to the same GUIDs and the
  // same hosts, cables and switches are present. Any part lost or returned changes it.
  const std::string& fingerprint() const { return fingerprint_; }

 private:
  topology::Layout known_;
  std::vector<std::vector<topology::FabricNode>> absent_switches_;  // stand-ins
  routing::OwnerIndex owners_;  // host port GUIDs, cabled now or last seen in their slots
  std::unordered_map<std::string, topology::HostId> host_by_name_;
  std::map<std::pair<topology::Guid, int>, topology::HostId> host_by_slot_;
  std::map<std::pair<topology::Guid, int>, topology::LinkId> link_by_port_;
  std::string fingerprint_;
};

// What is cabled outside the tree, for status and the routing log: every attached
// host (name, port GUID, switch and port, role: management, shared service or unlisted) and
// every extra cable.
nlohmann::json outside_tree_json(const TopologyView& view);

// Host names (recorded names, see recorded_name) that several hosts share, with their GUIDs:
// a shared name cannot be trusted to mean one host.
std::map<std::string, std::vector<topology::Guid>> shared_host_names(const TopologyView& view);

}  // namespace laas::service

// The fabric as the service sees it at one routing run: the recognized tree, the discovered
// graph it sits on, and the mapping between them. Immutable once built; shared by pointer.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "topology/embedding.h"

namespace laas::service {

struct TopologyView {
  TopologyView(topology::FatTree t, topology::Fabric f, topology::Embedding e,
               std::vector<topology::HostId> management = {});

  topology::FatTree tree;
  topology::Fabric fabric;
  topology::Embedding embedding;
  std::vector<topology::HostId> management_hosts;  // never allocated to tenants

  // GUID of the host's cabled port; 0 when the model host has no fabric node.
  topology::Guid host_guid(topology::HostId host) const;
  std::string host_name(topology::HostId host) const;
  topology::Lid host_lid(topology::HostId host) const;
  std::optional<topology::HostId> host_by_guid(topology::Guid port_guid) const;
  std::optional<topology::HostId> host_by_name(const std::string& name) const;
  // A model switch's node, and the physical port of one of its model ports.
  const topology::FabricNode& switch_node(int level, int index) const;
  int physical_port(int level, int index, int model_port) const;
  // The model up-link that leaves switch `guid` on physical port `port`.
  std::optional<topology::LinkId> link_by_port(topology::Guid switch_guid, int port) const;
  // Identifies the cabling: equal fingerprints mean model ids map to the same GUIDs.
  const std::string& fingerprint() const { return fingerprint_; }

 private:
  std::unordered_map<topology::Guid, topology::HostId> host_by_guid_;
  std::unordered_map<std::string, topology::HostId> host_by_name_;
  std::map<std::pair<topology::Guid, int>, topology::LinkId> link_by_port_;
  std::string fingerprint_;
};

}  // namespace laas::service

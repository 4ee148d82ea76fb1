// Text views of an allocation for administrators: the paper's leaf x spine link table.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "allocator/cluster.h"

namespace laas::ctl {

// Owners are tenant names; "" is free, "@management" and "@faulty" are what they say;
// "@down" is a part that is down now ("@down:NAME" when tenant NAME holds it).
struct MapRow {
  std::string name;
  std::vector<std::string> hosts;  // empty for level-2 rows
  std::vector<std::string> up_links;
  int rail = -1;  // a rail-optimized tree's leaf: its rail (-1: not one) and rail group
  int rail_group = -1;
};

struct AllocationMap {
  std::string summary;
  std::vector<MapRow> leaves;
  std::vector<MapRow> level2;
  std::vector<std::string> down;  // one line per part down, from the service
};

AllocationMap map_from_cluster(const allocator::Cluster& cluster);
// From the control socket's "topology" result; throws std::invalid_argument if malformed.
AllocationMap map_from_json(const nlohmann::json& topology);

// One row per leaf (and per level-2 switch on 3-level trees): hosts and up-link columns as
// tenant letters, '.' free, 'm' management, 'X' down or faulty; a legend maps letters to names.
std::string render_allocation_map(const AllocationMap& map, bool color);

// The leaf rows in drawing order: rail by rail (then rail group) on a rail-optimized tree, where
// a tenant's servers show as the same host columns on every rail; else as given.
std::vector<const MapRow*> leaves_in_order(const AllocationMap& map, bool* railed);

// The same map as an SVG document: a square per host and up-link in its tenant's
// colour, with tooltips and a legend, for a wiki page or a dashboard.
std::string render_allocation_svg(const AllocationMap& map);

}  // namespace laas::ctl

// One pass of laas-sdn's fabric side, without OpenSM: a discovered fabric (with the LIDs the SM
// assigned) and tenant requests in; the tree recognized, the tenants placed by the allocator,
// the isolating tables computed and mapped onto the LIDs, the partitions.conf and the
// allocations.json record (what laas-audit reads) out. A pure function: files and the SM are
// the caller's (laas-sdn-plan, sdn/plan_main.cc).
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "allocation/allocations.h"
#include "routing/routing.h"
#include "topology/fabric.h"
#include "topology/recognize.h"

namespace laas::sdn {

// The fabric is no fat-tree we recognize, a tenant cannot be placed, the tables cannot be
// built: what() says which.
class PlanError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct TenantRequest {
  std::string name;
  int hosts = 0;
};

struct PlanRequest {
  std::vector<TenantRequest> tenants;  // placed in this order
  topology::Guid sm_port_guid = 0;     // the SM's port (a host's or a switch's port 0); 0: none
  std::string algorithm = "laas";      // allocator::make_placer's names
};

struct Plan {
  topology::Recognition rec;
  routing::LidTables tables;  // [fabric node], as for sdn::lfts_text
  allocation::Allocations allocations;
  std::string partitions;  // partitions.conf (exports::generate_partitions)
  std::vector<std::string> warnings;
};

// Throws PlanError.
Plan make_plan(const topology::Fabric& fabric, const PlanRequest& request);

}  // namespace laas::sdn

// Tenants: the requested set (tenants.yaml). The realized one (allocations.json) is
// allocation/allocations.h's, named here for the engine.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "allocation/allocations.h"

namespace laas::core {

using topology::Guid;

struct TenantRequest {
  std::string name;
  int hosts = 0;                       // how many (0 with an explicit list: its size)
  std::vector<std::string> host_list;  // explicit hosts, by node name or port GUID
};

// Parses tenants.yaml: a list of {name, hosts: N} or {name, hosts: [name-or-GUID, ...]}. An
// absent file (ENOENT) is an empty list, with *exists false; the caller decides whether that
// may remove anyone. Throws std::runtime_error naming the file and entry, or why the file
// cannot be read (EACCES, EIO, a directory in its place).
std::vector<TenantRequest> load_tenant_requests(const std::string& path, bool* exists = nullptr);

// The realized tenants (allocations.json) are the allocation library's (allocation/).
using allocation::Allocations;
using allocation::allocations_from_json;
using allocation::audit_input;
using allocation::Endpoint;
using allocation::LinkRecord;
using allocation::load_allocations;
using allocation::make_record;
using allocation::record_unaccepted;
using allocation::TenantRecord;
using allocation::to_json;
using allocation::to_placement;
using allocation::UnacceptedRecord;

}  // namespace laas::core

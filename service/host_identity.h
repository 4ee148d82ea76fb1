// Identity is the host, not the slot. A tenant's hosts are recorded by slot (leaf
// switch GUID, port) and by the port GUID seen there when the tenant got it. A different port
// GUID in a tenant's slot -- a replaced server, or someone else's machine -- is unaccepted:
// the slot stays the tenant's (down for its health), but the newcomer gets no route from any
// switch, no P_Key and no place in the tenant's multicast trees until an administrator accepts
// it (`laasctl host accept`), and the audit reports it. A pure function of the recorded tenants
// and the fabric as recognized now.
#pragma once

#include <string>
#include <vector>

#include "service/physical_ids.h"
#include "service/state_store.h"

namespace laas::service {

struct UnacceptedHost {
  std::string tenant;
  topology::HostId host = -1;  // the model host of the slot
  topology::Guid leaf_guid = 0;
  int port = 0;                      // the leaf's physical port
  topology::Guid recorded_guid = 0;  // the tenant's host, as recorded in state.json
  std::string recorded_name;
  topology::Guid seen_guid = 0;  // what is cabled to the slot now
  std::string seen_name;
  bool operator==(const UnacceptedHost& o) const {
    return tenant == o.tenant && host == o.host && leaf_guid == o.leaf_guid && port == o.port &&
           recorded_guid == o.recorded_guid && recorded_name == o.recorded_name &&
           seen_guid == o.seen_guid && seen_name == o.seen_name;
  }
};

// The slots of `tenants` whose recorded port GUID is known (non-zero) and differs from the port
// GUID of a host present there now, in the order of the tenants and their hosts. Slots never
// seen (GUID 0), hosts that are down and slots not in this tree are not unaccepted; free slots
// are nobody's and simply take the new host.
std::vector<UnacceptedHost> find_unaccepted(const std::vector<PersistedTenant>& tenants,
                                            const PhysicalIds& ids);

// "tenant 'a': slot <leaf> port <p> holds 0x... ('name'), not the recorded 0x... ('name')"
std::string describe(const UnacceptedHost& q, const std::string& leaf_name);

}  // namespace laas::service

// TenantService and servers: a tenant holds whole servers. The service groups the
// tree's host ports by server at each new view; on a fabric where some server has several
// ports, requests count servers, explicit host lists name servers, reservations and the
// placement take every port of a server or none.
#include <algorithm>
#include <set>

#include "service/state_store.h"
#include "service/tenant_service.h"

namespace laas::service {

using nlohmann::json;

void TenantService::group_servers() {
  st_.servers = topology::group_servers(st_.view->tree, st_.view->embedding, st_.view->fabric,
                                        &st_.view->known(), st_.config.servers);
  // Rail by rail: a tenant's servers are checked per rail (one remainder leaf on each).
  if (st_.cluster) st_.cluster->set_leaf_rails(topology::rail_of_leaf(st_.view->tree, st_.servers));
}

}  // namespace laas::service

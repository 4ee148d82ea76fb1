// clang-format off
#include <opensm/osm_config.h>  // must come first: it fixes the layout of osm_opensm_t
#include <complib/cl_passivelock.h>
#define delete delete_cb
#include <opensm/osm_node.h>
#include <opensm/osm_opensm.h>
#include <opensm/osm_port.h>
#include <opensm/osm_remote_sm.h>
#include <opensm/osm_subnet.h>
#undef delete
// clang-format on

#include "opensm_plugin/subnet_managers.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace laas::plugin {
namespace {

std::string name_of_port(osm_opensm_t* osm, ib_net64_t port_guid) {
  osm_port_t* port = osm_get_port_by_guid(&osm->subn, port_guid);
  if (!port || !port->p_node) return "";
  const osm_node_t* node = port->p_node;
  if (node->print_desc && *node->print_desc) return node->print_desc;
  const auto* d = reinterpret_cast<const char*>(node->node_desc.description);
  return std::string(d, strnlen(d, IB_NODE_DESCRIPTION_SIZE));
}

service::SmIdentity identity(osm_opensm_t* osm, ib_net64_t port_guid, ib_net16_t lid,
                             int priority) {
  service::SmIdentity id;
  id.port_guid = cl_ntoh64(port_guid);
  id.name = name_of_port(osm, port_guid);
  id.lid = cl_ntoh16(lid);
  id.priority = priority;
  if (!id.lid)
    if (osm_port_t* port = osm_get_port_by_guid(&osm->subn, port_guid))
      id.lid = cl_ntoh16(osm_port_get_base_lid(port));
  return id;
}

}  // namespace

void SubnetManagers::refresh_locked(bool routing) {
  osm_opensm_t* osm = osm_;
  service::SmIdentity self =
      identity(osm, osm->subn.sm_port_guid, osm->subn.sm_base_lid, osm->subn.opt.sm_priority);
  std::optional<service::SmIdentity> master;
  std::vector<std::uint64_t> ports;
  std::vector<service::SmSeen> seen;
  if (self.port_guid) {
    ports.push_back(self.port_guid);
    seen.push_back({self.port_guid, self.name, self.lid,
                    service::sm_state_from_sminfo(osm->subn.sm_state), self.priority});
  }
  cl_qmap_t* tbl = &osm->subn.sm_guid_tbl;
  for (cl_map_item_t* it = cl_qmap_head(tbl); it != cl_qmap_end(tbl); it = cl_qmap_next(it)) {
    const auto* remote = reinterpret_cast<const osm_remote_sm_t*>(it);
    const std::uint64_t guid = cl_ntoh64(remote->smi.guid);
    if (!guid || std::find(ports.begin(), ports.end(), guid) != ports.end()) continue;
    ports.push_back(guid);
    const auto id = identity(osm, remote->smi.guid, 0, ib_sminfo_get_priority(&remote->smi));
    seen.push_back({guid, id.name, id.lid,
                    service::sm_state_from_sminfo(ib_sminfo_get_state(&remote->smi)), id.priority});
  }
  // An SM with another SM_Key is left out of OpenSM's table (osm_sminfo_rcv ignores its SMInfo),
  // yet its port says IsSM in the PortInfo OpenSM read: named too, its role unknown.
  cl_qmap_t* port_tbl = &osm->subn.port_guid_tbl;
  for (cl_map_item_t* it = cl_qmap_head(port_tbl); it != cl_qmap_end(port_tbl);
       it = cl_qmap_next(it)) {
    const auto* port = reinterpret_cast<const osm_port_t*>(it);
    if (!port->p_physp || !(port->p_physp->port_info.capability_mask & IB_PORT_CAP_IS_SM)) continue;
    const std::uint64_t guid = cl_ntoh64(osm_port_get_guid(port));
    if (!guid || std::find(ports.begin(), ports.end(), guid) != ports.end()) continue;
    ports.push_back(guid);
    const auto id = identity(osm, osm_port_get_guid(port), 0, -1);
    seen.push_back({guid, id.name, id.lid, service::SmState::kUnknown, -1});
  }
  std::sort(ports.begin(), ports.end());
  // A standby polls its master: OpenSM keeps its GUID, and the master's LID in the subnet.
  if (osm->subn.sm_state == IB_SMINFO_STATE_MASTER) {
    master = self;
  } else if (osm->sm.master_sm_guid) {
    int priority = -1;
    auto* remote =
        reinterpret_cast<const osm_remote_sm_t*>(cl_qmap_get(tbl, osm->sm.master_sm_guid));
    if (remote != reinterpret_cast<const osm_remote_sm_t*>(cl_qmap_end(tbl)))
      priority = ib_sminfo_get_priority(&remote->smi);
    master = identity(osm, osm->sm.master_sm_guid, osm->subn.master_sm_base_lid, priority);
  }
  std::lock_guard<std::mutex> lock(mu_);
  self_ = std::move(self);
  master_ = std::move(master);
  ports_ = std::move(ports);
  seen_ = std::move(seen);
  if (routing) routing_thread_ = std::this_thread::get_id();
}

void SubnetManagers::refresh() {
  cl_plock_acquire(&osm_->lock);
  refresh_locked();
  cl_plock_release(&osm_->lock);
}

service::SmRole SubnetManagers::role() {
  service::SmRole r;
  // One byte OpenSM's state manager writes; read without its lock (a stale value is what any
  // reader gets a moment later anyway).
  r.state = service::sm_state_from_sminfo(osm_->subn.sm_state);
  bool refresh_now;
  {
    std::lock_guard<std::mutex> lock(mu_);
    refresh_now = r.state != service::SmState::kMaster &&
                  (!master_ || master_->port_guid == self_.port_guid || !self_.port_guid) &&
                  std::this_thread::get_id() != routing_thread_;
  }
  if (refresh_now) refresh();
  std::lock_guard<std::mutex> lock(mu_);
  r.self = self_;
  if (r.state == service::SmState::kMaster)
    r.master = self_;
  else if (master_ && master_->port_guid != self_.port_guid)
    r.master = master_;
  return r;
}

std::vector<std::uint64_t> SubnetManagers::ports() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ports_;
}

std::vector<service::SmSeen> SubnetManagers::seen() const {
  std::lock_guard<std::mutex> lock(mu_);
  return seen_;
}

service::SmIdentity SubnetManagers::self() const {
  std::lock_guard<std::mutex> lock(mu_);
  return self_;
}

void SubnetManagers::note_state() {
  const auto state = service::sm_state_from_sminfo(osm_->subn.sm_state);
  if (state == service::SmState::kStandby || state == service::SmState::kNotActive) {
    std::lock_guard<std::mutex> lock(mu_);
    last_not_master_ = std::chrono::steady_clock::now();
  }
}

std::chrono::steady_clock::time_point SubnetManagers::last_not_master() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_not_master_;
}

int SubnetManagers::detection_ms(int extra_polls) const {
  return (static_cast<int>(osm_->subn.opt.polling_retry_number) + extra_polls) *
         static_cast<int>(osm_->subn.opt.sminfo_polling_timeout);
}

}  // namespace laas::plugin

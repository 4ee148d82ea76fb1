#include "service/service_state.h"

#include <algorithm>

#include "service/protocol.h"
#include "service/request_error.h"
#include "service/request_params.h"

namespace laas::service {

ServiceState::ServiceState(ServiceConfig config_in, Logger log_in)
    : config(std::move(config_in)),
      log(std::move(log_in)),
      store(config.state_dir, config.etcd && !config.state_dir_unknown
                                  ? std::make_shared<EtcdState>(*config.etcd, /*follow=*/true)
                                  : nullptr) {}

ServiceState::~ServiceState() {
  if (const auto& etcd = store.etcd()) {
    etcd->set_recovery_hook(nullptr);
    etcd->stop();
  }
}

std::string unknown_state_dir_text(const ServiceConfig& config) {
  return "laas.yaml could not be read, so the state directory is not known: nothing is read "
         "from or written to " +
         config.state_dir +
         " (the built-in default, a guess); every host is routed as a free host until laas.yaml "
         "is fixed and OpenSM restarted";
}

bool holds_term(const ServiceState& st) { return !st.sm.role_provider || st.term.term_held; }

SmRole current_role(const ServiceState& st) {
  std::function<SmRole()> provider;
  {
    std::lock_guard<std::mutex> lock(st.mu);
    provider = st.sm.role_provider;
  }
  return provider ? provider() : SmRole{};
}

nlohmann::json role_json(const ServiceState& st, const SmRole& sm) {
  nlohmann::json j = sm.to_json();
  j["holds_state"] = sm.may_change_tenants() && holds_term(st);
  j["state_master"] = st.persisted.master;  // the SM that took the shared state over last
  // Who is master as the plugin last looked (it may have changed since the role was read).
  j["master_trusted"] = st.sm.master_trusted;
  if (st.sm.fabric_master && (!sm.master || sm.master->port_guid != st.sm.fabric_master->port_guid))
    j["master"] = sm_identity_json(*st.sm.fabric_master);
  return j;
}

void require_topology(const ServiceState& st) {
  if (!st.condition.blocked.empty()) fail(error::kUnavailable, st.condition.blocked);
  if (!st.view || !st.cluster)
    fail(error::kUnavailable, "no fat-tree is recognized: " + st.routing.topology_error);
}

std::vector<topology::HostId> whole_servers(const ServiceState& st,
                                            const std::vector<topology::HostId>& hosts) {
  if (!st.servers.multi_port()) return hosts;
  std::vector<topology::HostId> out;
  for (auto h : hosts) {
    const auto& ports = st.servers.ports[st.servers.server_of[h]];
    out.insert(out.end(), ports.begin(), ports.end());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// -1: do not wait. Both fields are checked whether or not they are used.
int wait_ms(const ServiceState& st, const nlohmann::json& params) {
  const bool wait = get_bool(params, "wait", true);
  int timeout_ms = st.config.default_wait_ms;
  if (params.contains("timeout_ms")) {
    timeout_ms = get_int(params, "timeout_ms");
    if (timeout_ms < 0 || timeout_ms > kMaxWaitMs)
      fail(error::kBadRequest,
           "field 'timeout_ms' must be between 0 and " + std::to_string(kMaxWaitMs));
  }
  return wait ? timeout_ms : -1;
}

const PersistedTenant* persisted_tenant(const ServiceState& st, const std::string& name) {
  for (const auto& p : st.persisted.tenants)
    if (p.name == name) return &p;
  return nullptr;
}

bool link_touches(const topology::FatTree& tree, topology::LinkId l, int level, int index) {
  const auto lo = tree.link_lower(l), up = tree.link_upper(l);
  return (lo.level == level && lo.index == index) || (up.level == level && up.index == index);
}

const PersistedFabricDrain* switch_drain_of(const ServiceState& st, int level, int index) {
  if (!st.ids || st.persisted.drained_switches.empty()) return nullptr;
  const auto guid = st.ids->switch_guid(level, index);
  for (const auto& d : st.persisted.drained_switches)
    if (guid && d.guid == guid) return &d;
  return nullptr;
}

const PersistedFabricDrain* leaf_drain_of(const ServiceState& st, topology::HostId h) {
  if (!st.view || st.persisted.drained_switches.empty()) return nullptr;
  return switch_drain_of(st, 1, st.view->tree.leaf_of_host(h));
}

std::vector<topology::LinkId> drained_links(const ServiceState& st) {
  std::vector<topology::LinkId> out;
  if (!st.view || !st.ids) return out;
  for (const auto& d : st.persisted.drained_links)
    if (const auto l = st.ids->link_at(d.guid, d.port)) out.push_back(*l);
  if (!st.persisted.drained_switches.empty()) {
    const auto& tree = st.view->tree;
    for (int level = 1; level <= tree.height(); ++level)
      for (int i = 0; i < tree.num_switches(level); ++i) {
        if (!switch_drain_of(st, level, i)) continue;
        for (topology::LinkId l = 0; l < tree.total_links(); ++l)
          if (link_touches(tree, l, level, i)) out.push_back(l);
      }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string read_text_io(const ServiceState& st, const std::string& path, bool* exists) {
  auto [text, found] = st.io->call(
      [path] {
        bool e = false;
        std::string t = read_text(path, &e);
        return std::make_pair(std::move(t), e);
      },
      kIoDeadline);
  if (exists) *exists = found;
  return text;
}

}  // namespace laas::service

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

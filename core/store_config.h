// laas.yaml's `state_store` and `etcd:` as the service takes them (service/etcd_state.h).
#pragma once

#include <memory>
#include <optional>

#include "core/config.h"
#include "service/etcd_state.h"
#include "service/state_store.h"

namespace laas::core {

inline std::optional<service::EtcdSettings> etcd_settings(const Config& c) {
  if (c.state_store != "etcd") return std::nullopt;
  service::EtcdSettings s;
  s.client.endpoints = c.etcd.endpoints;
  s.client.cacert = c.etcd.cacert;
  s.client.cert = c.etcd.cert;
  s.client.key = c.etcd.key;
  s.client.timeout_ms = c.etcd.timeout_ms;
  s.lease_ttl_s = c.etcd.lease_ttl_s;
  s.prefix = c.etcd.prefix;
  return s;
}

// The state store of a checked laas.yaml for a one-shot tool (no watch): its state directory,
// or its etcd.
inline service::StateStore offline_state_store(const Config& c) {
  const auto etcd = etcd_settings(c);
  return service::StateStore(
      c.state_dir, etcd ? std::make_shared<service::EtcdState>(*etcd, /*follow=*/false) : nullptr);
}

}  // namespace laas::core

// What the types the tenant service is made of may ask of its lifecycle, in small interfaces
// TenantService implements: each type is handed only the ones it calls, so that the compiler,
// not a comment, says which parts of the lifecycle a type depends on.
//
// Locking: every call here is made with ServiceState::mu held (finish_change releases it).
#pragma once

#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

namespace laas::service {

// A change made in memory becomes durable and reaches OpenSM: state.json and the managed
// partitions.conf saved together (both or neither), then OpenSM told and, when asked, the
// routing waited for (tenant_service.cc says how).
class ChangeCommitter {
 public:
  // Saves the state and partitions.conf; true when partitions.conf changed. Throws
  // RequestError (the caller puts its in-memory change back). `not_durable`: saved, not synced.
  virtual bool commit(std::string* not_durable) = 0;
  // The end of a committed change: releases `lock`, tells OpenSM, reports a change not durable
  // and waits `wait` ms (-1: not) for the routing of it.
  virtual nlohmann::json finish_change(std::unique_lock<std::mutex>& lock, bool partitions_changed,
                                       const std::string& not_durable, const std::string& done,
                                       nlohmann::json result, int wait, bool reroute = true) = 0;

 protected:
  ~ChangeCommitter() = default;
};

// The persisted placements follow the cluster's: after repairs made or undone.
class PlacementRecorder {
 public:
  virtual void record_placed() = 0;  // in memory only
  // The same, saved (a failure is logged, and what was not written is written later).
  virtual void save_placed(const std::string& why) = 0;

 protected:
  ~PlacementRecorder() = default;
};

// The cluster rebuilt from the persisted state on the current view, as at a routing run.
class ClusterRebuilder {
 public:
  virtual void rebuild_cluster() = 0;
  // Every management leaf keeps one working up-link no tenant may take.
  virtual void reserve_management_uplinks() = 0;

 protected:
  ~ClusterRebuilder() = default;
};

}  // namespace laas::service

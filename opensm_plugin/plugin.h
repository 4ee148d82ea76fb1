// The plugin's state, one for the OpenSM that loaded it (create() makes it, remove_plugin()
// ends it), and how every part of the plugin speaks to OpenSM: its log and a re-route request.
// Each job of the plugin has files of its own (opensm_plugin/README.md lists them).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "core/controller.h"
#include "opensm_plugin/lft_check.h"
#include "opensm_plugin/opensm_headers.h"
#include "opensm_plugin/subnet_managers.h"
#include "routing/routing.h"
#include "routing/switch_hops.h"
#include "service/socket_server.h"

namespace laas::plugin {

// The routing engine's state: OpenSM calls every callback with it as the context.
struct Plugin {
  osm_opensm_t* osm = nullptr;
  std::unique_ptr<core::Controller> engine;
  std::unique_ptr<SubnetManagers> sms;
  // Set when a routing run took the tenant state over (failover, handover, first start): the
  // start of that run, and when this SM was last seen out of the master's role, for the log
  // line that says how long the fabric went without tenant tables (sweeper thread only).
  bool took_over_pending = false;
  bool lmc_logged = false;
  std::chrono::steady_clock::time_point took_over_run_start{}, took_over_last_standby{};
  std::unique_ptr<service::SocketServer> socket;
  std::thread watcher;
  std::mutex mu;
  std::condition_variable cv;
  bool stopping = false;
  // The first-hop drop of the last successful routing run, for update_sl2vl (which OpenSM
  // calls from the same sweeper thread, after the forwarding tables: no lock needed).
  std::shared_ptr<const routing::Sl2VlTables> sl2vl;  // null: none yet
  std::unordered_map<uint64_t, int> node_of_guid;     // switch node GUID -> row of sl2vl
  // The switch graph of the last build_lid_matrices and its distances (sweeper thread only).
  routing::SwitchGraph hop_graph;
  std::unique_ptr<routing::HopMatrix> hop_matrix;
  // Whether the last run filled OpenSM's hop matrices (its routing dumps were on), and whether
  // a run that left them unfilled said so (once, and again after a run that filled them).
  bool hop_matrices_filled = false;
  bool hop_matrices_skip_logged = false;
  // OpenSM's partition manager (see apply_partitions), null when a partitions change takes a
  // heavy sweep; and whether partitions.conf changed since it last ran.
  int (*pkey_mgr)(osm_opensm_t*) = nullptr;
  std::atomic<bool> partitions_pending{false};
  // The switch check (opensm_plugin/lft_check.h): LFT blocks read back and repaired.
  std::unique_ptr<LftCheck> lft_check;
};

// One line in OpenSM's log, `laas: ` first.
void log_line(osm_opensm_t* osm, osm_log_level_t level, const std::string& msg);
// The service's log lines into OpenSM's log.
service::Logger logger_for(osm_opensm_t* osm);
// Asks OpenSM for a re-route soon (from any thread but the sweeper's).
void request_reroute(osm_opensm_t* osm);

}  // namespace laas::plugin

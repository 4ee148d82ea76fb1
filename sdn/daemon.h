// laas-sdn: the second adapter over core::Controller, for an OpenSM-family SM that does not load
// the plugin (NVIDIA's OpenSM, UFM, a plain upstream OpenSM with `routing_engine file`). It
// serves the same control socket as the plugin; each routing run discovers the fabric itself
// (infiniband-diags' ibnetdiscover as a child process), takes the LIDs the SM assigned, routes with
// the core, writes the lfts_file (and the service keeps the partitions file), reloads the SM when a
// file changed, and reads the changed switches' tables back to say whether the SM applied them.
//
// Runs come from a worker thread of its own: every sdn.discover_interval, on `laasctl
// reroute`, on a tenant change (AdapterHooks::reroute, partitions_changed) and when tenants.yaml
// changed. laas-sdn is the master of its own state directory: there is no SM election for it to
// follow, so one laas-sdn serves a fabric.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/controller.h"
#include "sdn/readback.h"
#include "sdn/reload.h"
#include "sdn/report.h"
#include "service/metrics.h"
#include "util/ticker.h"

namespace laas::sdn {

class MadPort;

class SdnDaemon {
 public:
  // `config` must have passed core::sdn_problems; whole_leaves unset means true here.
  SdnDaemon(core::Config config, service::Logger log);
  ~SdnDaemon();

  core::Controller& controller() { return *controller_; }
  void start();  // the worker thread; the first run at once
  void stop();
  void request_run(const std::string& why);

 private:
  struct Run;
  void tick();  // on the ticker, once a second and at request_run
  void run_once();
  std::string apply(const core::RouteOutcome& out, Run& run);
  std::string check_applied(const routing::LidTables& tables, const std::vector<int>& changed,
                            Run& run);
  void note(const Run& run);
  // The pieces of one run, in order.
  core::FabricSnapshot discover(std::map<topology::Guid, std::string>* paths);
  bool write_files(const topology::Fabric& fabric, const core::RouteOutcome& out,
                   std::string* lfts_text, bool* partitions_changed);
  std::string reload();
  // The MAD port (the master SM's LID, the read-back), opened on first use and kept: one port
  // for the daemon's life (see sdn/discovery.h for why not a port per use); reopened only when
  // it stops answering.
  MadPort& port();
  void reopen_port(const std::string& why);
  BlockCheck read_back(const topology::Fabric& fabric, const routing::LidTables& tables,
                       const std::vector<int>& changed,
                       const std::map<topology::Guid, std::string>& paths, std::string* error);

  core::Config config_;
  service::Logger log_;
  std::unique_ptr<core::Controller> controller_;
  util::Ticker ticker_;
  std::chrono::steady_clock::time_point last_run_;  // the ticker's
  mutable std::mutex mu_;
  bool wanted_ = true;  // a run is due (the first one at start)
  std::string why_ = "start";
  SdnReport report_;
  // Worker thread only: what the SM was last told to read.
  std::optional<std::string> reloaded_lfts_, reloaded_partitions_;
  std::map<topology::Guid, routing::LidTable> sent_;  // switch GUID -> table in the file
  std::unique_ptr<MadPort> port_;
};

}  // namespace laas::sdn

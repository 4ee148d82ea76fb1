// The LaaS controller without a subnet manager: a discovered Fabric in, LID-indexed
// forwarding tables and SL2VL drops out (core/adapter.h is the boundary). An adapter -- the
// OpenSM plugin, laas-sdn -- only turns its fabric into a FabricSnapshot and the outcome into
// what its SM sends, so everything here is testable without a fabric.
//
// Tenants live in service::TenantService (GUID-keyed, durable state.json, the control
// socket's backend). Each routing run hands it the recognized topology, feeds it the
// tenants file when that changed (a file-based client: tenants listed are added, tenants
// dropped from the file are removed), takes a snapshot of the placements, routes them and
// writes allocations.json (hosts, links, shape per tenant) for tools and tests.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/adapter.h"
#include "core/config.h"
#include "core/multicast.h"
#include "core/sent_tables.h"
#include "core/state_files.h"
#include "core/tenants.h"
#include "core/tenants_file.h"
#include "routing/incremental.h"
#include "routing/saved_tables.h"
#include "routing/sl2vl.h"
#include "service/tenant_service.h"
#include "service/topology_view.h"
#include "topology/fabric.h"
#include "topology/layout.h"
#include "topology/recognition_cache.h"
#include "topology/recognize.h"

namespace laas::core {

struct RoutingRun;  // one routing run's working set (controller.cc)

class Controller {
 public:
  // Throws std::runtime_error when the configuration cannot work (unknown placer).
  Controller(Config config, service::Logger log);

  const Config& config() const { return config_; }
  service::TenantService& service() { return service_; }

  // The fabric side's hooks (core/adapter.h), once, before the first routing run.
  void connect(AdapterHooks hooks);
  // Called when tenants change outside a routing run (socket requests): ask for a re-route.
  void set_reroute_hook(std::function<void()> hook);
  // Why tenants cannot be routed (corrupt state), empty when they can.
  std::string state_error() const;
  // Whether tenants.yaml differs from the version the last routing run looked at, true only
  // once per version of the file: whoever gets true asks for the re-route.
  bool claim_tenants_change();

  // with_sl2vl false leaves out the first-hop drop (out.sl2vl empty): an SM that programs no
  // SL2VL never asks for it, and planning it is a tenth of a second at 11,664 hosts.
  // `sm_ports`: the port GUIDs of every subnet manager the adapter knows of (SMInfo), this
  // one's included: with those recorded before, they are management hosts, the same on every SM.
  RouteOutcome route(const topology::Fabric& fabric, Guid sm_port_guid, bool with_sl2vl = true,
                     const std::vector<Guid>& sm_ports = {});
  // An adapter's routing run: the same, with the snapshot's LMC (every LID of a port routed
  // like its base LID).
  RouteOutcome route(const FabricSnapshot& snapshot);
  // Waits at most `timeout` for the files the routing runs queued (allocations.json,
  // layout.json, tenants.yaml.applied) to be written; not at all while the state directory does
  // not answer. False: some are not written yet.
  bool wait_for_writes(std::chrono::milliseconds timeout);
  // The tables of the last successful route() reached the switches.
  // `failure` non-empty: the tables or the P_Keys did not reach the fabric (what failed).
  void on_routing_done(const std::string& failure = "");
  // Keeps the tables a successful run sent (per fabric node, handed over) in the state
  // directory, with whom each LID belonged to (`lids`), for a start that must fail closed. Not
  // with an invalid laas.yaml (which rewrites nothing), nor unless this SM is master and holds
  // the shared state's term (a deposed master's write is fenced off).
  void keep_sent_tables(routing::LidOwners lids, std::vector<Guid> switch_guids,
                        std::vector<std::vector<std::uint8_t>> tables,
                        std::shared_ptr<const routing::Sl2VlTables> sl2vl);
  // The tables a start failing closed gave back from the file (routing::restorable), kept
  // again under this SM's term on the same conditions: what this master sent.
  void keep_given_back_tables(std::shared_ptr<const routing::SavedTables> given);
  // The tables kept by keep_sent_tables (null, with `why`, when none can be read, or they were
  // written in a term older than the last master's).
  std::shared_ptr<const routing::SavedTables> sent_tables(std::string* why) const;
  // A routing run's wall time and the LFT blocks it left to send, for the metrics.
  void record_routing_run(double seconds, long lft_blocks) {
    service_.record_routing(seconds, lft_blocks);
  }

  // Audits tables read from the switches (LID-indexed, per fabric node) against the tenants
  // of the last routing run: the routing audit's JSON report plus "violations" and
  // "tenants". Throws std::runtime_error when the fabric is not a recognized fat-tree.
  // With `mfts` (one slot per fabric node), the multicast tables are audited too: the report
  // gains "multicast" and its violations count in "violations". `members` (MLID -> member port
  // GUIDs, from the SA) lets the audit flag receivers that never joined.
  nlohmann::json audit(const topology::Fabric& fabric,
                       const std::vector<std::vector<std::uint8_t>>& tables, Guid sm_port_guid,
                       const routing::Sl2VlTables* sl2vl = nullptr,
                       const routing::Mfts* mfts = nullptr,
                       const std::map<std::uint16_t, std::vector<Guid>>* members = nullptr);

  // The spanning tree of one multicast group (member port GUIDs) under the tenants of the last
  // successful route(); safe from any thread.
  McastOutcome multicast_tree(const std::vector<Guid>& member_ports, unsigned mlid) const;

 private:
  friend struct ControllerTesting;  // core/controller_testing.h
  // layout.json, allocations.json, tenants.yaml.applied, read on the state directory's worker
  // within `deadline`; false (memory kept) when the directory does not answer.
  bool read_shared_files(std::chrono::milliseconds deadline);
  bool routed_once() const;
  // Recognition against the recorded layout / the declared spec / the cabling; the last one
  // again when nothing it depends on changed (`reused`).
  topology::Recognition recognize_now(const topology::Fabric& fabric, Guid sm_port_guid,
                                      bool set_aside_loops = false, bool* reused = nullptr);
  // The phases of route() (controller.cc), in order.
  void take_over(RoutingRun& run);
  bool recognize(RoutingRun& run);
  void derive_management(RoutingRun& run);
  void publish_view(RoutingRun& run);
  void log_outside_tree(RoutingRun& run);
  void note_subnet_managers(RoutingRun& run);
  void listed_management(RoutingRun& run);
  void management_switches(RoutingRun& run);
  void widen_management_to_adapters(RoutingRun& run);
  bool choose_tenants(RoutingRun& run);
  void build_request(RoutingRun& run);
  void note_unaccepted(RoutingRun& run);
  void request_tenants(RoutingRun& run, const topology::Layout* layout);
  void request_reach_all(RoutingRun& run);
  void request_faulty_links(RoutingRun& run, const topology::Layout* layout);
  void close_unlisted_attached(RoutingRun& run);
  void compute_and_publish(RoutingRun& run);
  void publish_multicast(RoutingRun& run);
  void note_closed(RoutingRun& run);
  bool routes_closed() const;
  // Records the layout at the first recognition, keeps host identities current, re-records
  // it when the fabric no longer fits and the cabling shows a complete tree.
  void keep_layout(const topology::Recognition& rec, const topology::Fabric& fabric,
                   RouteOutcome& out);
  std::optional<topology::Layout> layout_to_record(const topology::Recognition& rec,
                                                   const topology::Fabric& fabric,
                                                   RouteOutcome& out, std::string* why);
  // Fail closed: with tenants known and fail_open unset, `out` gets the last good
  // tables (by switch GUID; switches never routed get none: the SM leaves them without
  // routes) and is ok; otherwise `out` is returned as the refusal it is.
  RouteOutcome& fail_closed(const topology::Fabric& fabric, const std::string& why,
                            RouteOutcome& out);
  bool tenants_known() const;
  // The tenants last routed (memory, else allocations.json), placed on this view, and the
  // slots of theirs another port GUID holds now (`unaccepted`: decided here, as the service
  // decides them from a readable state).
  std::vector<std::pair<std::string, allocator::Placement>> last_routed_tenants(
      const service::TopologyView& view, RouteOutcome& out,
      std::vector<service::UnacceptedHost>* unaccepted) const;

  Config config_;
  service::Logger log_;
  service::TenantService service_;
  TenantsFile tenants_file_;
  StateFiles files_;  // layout.json, allocations.json
  SentTables sent_;   // tables.bin
  std::function<void()> reroute_;
  std::shared_ptr<const service::TopologyView> view_;  // the last one given to the service
  std::string last_source_note_;                       // logged when it changes
  topology::RecognitionCache recognitions_;            // the last recognition (own lock)
  int lmc_ = 0;
  std::string last_outside_;  // what is outside the tree, logged
  std::string fail_closed_;   // why the last run failed closed (routing thread only)
  mutable std::mutex mu_;     // guards the fields below
  bool routed_once_ = false;
  std::uint64_t last_generation_ = 0;
  Allocations routed_;                         // what the last successful run routed
  std::map<std::string, std::string> shapes_;  // tenant -> shape text (route() only)
  std::shared_ptr<const McastContext> mcast_;  // what the last successful run routed
  routing::IncrementalRouting incremental_;    // the last run's model tables (routing thread)
};

}  // namespace laas::core

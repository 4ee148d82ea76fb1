// The tenant service and the rest of the cluster (service/service_exports.cc): the managed
// partitions.conf (generated from the tenants, written atomically, applied by OpenSM) and the
// export formats of `laasctl export` (partitions, routing chains, Slurm, OpenStack).
//
// One of the types the tenant service is made of: it works on the service's shared state
// (service/service_state.h) under its one lock; files are read and written on the state
// directory's worker. It exports tenants as ServiceViews shows them, and records the members of
// the partitions (PlacementRecorder) while this SM holds the shared state (holds_term).
// Locking: every method is called with ServiceState::mu held.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "export/k8s_labels.h"
#include "export/partitions.h"
#include "export/records.h"
#include "service/partition_inputs.h"
#include "service/service_lifecycle.h"
#include "service/service_state.h"

namespace laas::service {

class ServiceViews;

class ServiceExports {
 public:
  ServiceExports(ServiceState& st, PlacementRecorder& placements, const ServiceViews& views)
      : st_(st), placements_(placements), views_(views) {}

  // The managed partitions.conf of the tenants routed now. Throws exports::ExportError.
  std::string partitions_text() const;
  // Who else it names, as this SM routes the fabric now.
  PartitionMembers partition_members() const;
  // Records partition_members() in the shared state (written with its next save), so a
  // standby's partitions.conf is the master's; true when the record changed.
  bool record_partition_members();
  // The administrator's partitions: its text (none: no base) and the file it came from.
  struct PartitionsBase {
    std::optional<std::string> text;
    std::string name = "partitions.conf";
  };
  PartitionsBase partitions_base() const;
  // What every managed partitions.conf starts from, master's or standby's: the
  // administrator's base and this SM's port (SELF) a full member of every partition.
  exports::PartitionOptions partition_options() const;
  bool refresh_managed_partitions();  // true when the file changed
  // The managed partitions.conf as last written here (by a change, a routing run or a standby
  // following the shared state), and whether a write is owed (the directory hung).
  const std::string& last_written() const { return managed_.last_written; }
  void note_written(const std::string& text) { managed_.last_written = text; }
  bool unsynced() const { return managed_.unsynced; }
  // Replaces the managed partitions.conf with `text`, after keeping the administrator's own
  // file once as <file>.pre-laas. Throws std::runtime_error, the file untouched.
  void write_managed_partitions(const std::string& text);
  nlohmann::json export_files(const nlohmann::json& params) const;
  // Gives every recorded tenant without a P_Key one (state written before P_Keys existed, a
  // tenant just added), clear of the other tenants' and the administrator's partitions.
  void assign_missing_pkeys();

 private:
  // `removal`: what takes the tenants back out (Slurm, OpenStack).
  nlohmann::json export_format(const std::string& format, const nlohmann::json& params,
                               bool removal,
                               const std::vector<exports::TenantRecord>& records) const;
  // For the schedulers' exports (Slurm, OpenStack): one host a server, named by the server.
  void one_host_per_server(std::vector<exports::TenantRecord>& records) const;
  // For Slurm's topology.conf: each server under one leaf (its first port's, rail 0 on a
  // rail-optimized tree), as Slurm expects one leaf a node; leaves left empty are dropped.
  void one_leaf_per_server(exports::TreeRecord& tree) const;
  // For Kubernetes: every server (only those of `records` when `only_listed`) with its place in
  // the tree, and its tenant among `records` (none when `removal`).
  std::vector<exports::K8sNode> k8s_nodes(const std::vector<exports::TenantRecord>& records,
                                          bool only_listed, bool removal) const;

  ServiceState& st_;
  PlacementRecorder& placements_;
  const ServiceViews& views_;
  // The managed partitions.conf (mu).
  struct ManagedFile {
    std::string last_written;
    bool unsynced = false;  // could not be written: the next routing run retries
  } managed_;
};

}  // namespace laas::service

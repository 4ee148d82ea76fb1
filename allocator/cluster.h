// Named tenants on a fat-tree: the allocator's front door. Validates requests, asks the placer,
// commits to the LinkState, and releases exactly. Every failed call leaves the state unchanged.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "allocator/link_state.h"
#include "allocator/placer.h"

namespace laas::allocator {

struct Tenant {
  std::string name;
  int requested = 0;  // hosts asked for (placement may hold more: whole leaves)
  TenantIndex index = kFree;
  Placement placement;
};

enum class Status { kOk, kBadRequest, kRefused, kNotFound, kDuplicate };

struct Outcome {
  Status status = Status::kOk;
  std::string message;             // what happened or why not, fit for an administrator's log
  const Tenant* tenant = nullptr;  // the tenant added (kOk on add)
  bool ok() const { return status == Status::kOk; }
};

class Cluster {
 public:
  // The cluster keeps its own copy of the tree: callers' topology objects may come and go
  // (a new one per routing run) while the tenants stand.
  Cluster(const FatTree& tree, std::unique_ptr<Placer> placer);
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  const FatTree& tree() const { return state_.tree(); }
  const LinkState& state() const { return state_; }
  const Placer& placer() const { return *placer_; }

  Outcome add(const std::string& name, int hosts);
  // What add() would do, without doing it.
  Outcome plan(const std::string& name, int hosts, Placement* out) const;
  // Re-installs a known placement (reloading saved state): hosts and links must be free and
  // satisfy the LaaS conditions (the independent checker's rules).
  Outcome add_explicit(const std::string& name, int requested, const Placement& placement);
  // Places a tenant on the hosts an administrator chose; links are chosen to satisfy the LaaS
  // conditions, or the request is refused saying which condition fails.
  Outcome add_on_hosts(const std::string& name, const std::vector<HostId>& hosts, bool dry_run,
                       Placement* out);
  Outcome remove(const std::string& name);
  void set_faulty(LinkId link, bool faulty) { state_.set_faulty(link, faulty); }
  // Keeps hosts out of every placement (the SM's host, configured management ports). Hosts
  // already held by a tenant are skipped and returned.
  std::vector<HostId> reserve(const std::vector<HostId>& hosts);

  const Tenant* find(const std::string& name) const;
  const std::map<std::string, Tenant>& tenants() const { return tenants_; }

 private:
  Outcome validate_new(const std::string& name, int hosts) const;
  TenantIndex next_index();

  const FatTree tree_;  // before state_, which points into it
  LinkState state_;
  std::unique_ptr<Placer> placer_;
  std::map<std::string, Tenant> tenants_;
  std::vector<TenantIndex> free_indices_;
  TenantIndex next_index_ = 0;
};

// Tenant names travel into partitions.conf, Slurm and OpenStack files: keep them to
// [A-Za-z0-9_.-], 1..64 characters. Returns an empty string when valid, else the reason.
std::string validate_tenant_name(const std::string& name);

}  // namespace laas::allocator

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
  Cluster(const FatTree& tree, std::unique_ptr<Placer> placer);

  const FatTree& tree() const { return state_.tree(); }
  const LinkState& state() const { return state_; }
  const Placer& placer() const { return *placer_; }

  Outcome add(const std::string& name, int hosts);
  // What add() would do, without doing it.
  Outcome plan(const std::string& name, int hosts, Placement* out) const;
  // Re-installs a known placement (reloading saved state): hosts and links must be free and
  // satisfy the LaaS conditions (the independent checker's rules).
  Outcome add_explicit(const std::string& name, int requested, const Placement& placement);
  Outcome remove(const std::string& name);
  void set_faulty(LinkId link, bool faulty) { state_.set_faulty(link, faulty); }

  const Tenant* find(const std::string& name) const;
  const std::map<std::string, Tenant>& tenants() const { return tenants_; }

 private:
  Outcome validate_new(const std::string& name, int hosts) const;
  TenantIndex next_index();

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

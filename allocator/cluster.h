// Named tenants on a fat-tree: the allocator's front door. Validates requests, asks the placer,
// commits to the LinkState, and releases exactly. Every failed call leaves the state unchanged.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "allocator/link_state.h"
#include "allocator/placer.h"
#include "check/checker.h"

namespace laas::allocator {

// A repair: column retired[i] of a switch was replaced by added[i] on the same switch,
// across every switch of the tenant that shares the broken column, so Theorems 1-2 still hold on
// the links the tenant routes over. The retired links stay held (Placement::idle).
struct Repair {
  std::vector<LinkId> retired;
  std::vector<LinkId> added;
  bool operator==(const Repair& o) const { return retired == o.retired && added == o.added; }
};

struct Tenant {
  std::string name;
  int requested = 0;  // hosts asked for (placement may hold more: whole leaves)
  TenantIndex index = kFree;
  Placement placement;            // links: routed over; idle: retired by repairs
  std::vector<Repair> repairs{};  // in the order they were made
  // The links as placed, before any repair: what the state file records with the repairs.
  std::vector<LinkId> intended_links() const;
};

// What is down on the fabric. A switch down takes every up- and down-link of it with it, and a
// leaf down its hosts too; effective faults are recomputed from this whole set each time.
struct Faults {
  std::vector<LinkId> links;                  // cables absent
  std::vector<HostId> hosts;                  // hosts absent
  std::vector<std::pair<int, int>> switches;  // (level, index) absent
  // Links an administrator took out of service (maintenance): never placed, and tenants are
  // repaired off them as off a fault, but they work -- a tenant that cannot be moved yet keeps
  // routing over one and is not degraded for it.
  std::vector<LinkId> drained{};
};

// How a tenant fares under the current faults.
struct Health {
  std::vector<HostId> down_hosts;
  std::vector<LinkId> faulty_links;  // links it routes over that are faulty
  // Leaf pairs (a < b) between which no up*/down* path of its own healthy links remains.
  std::vector<std::pair<int, int>> lost_leaf_pairs;
  bool degraded() const { return !down_hosts.empty() || !faulty_links.empty(); }
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
  // Another placer for the next placements (tenants stay as they are).
  void set_placer(std::unique_ptr<Placer> placer) { placer_ = std::move(placer); }

  Outcome add(const std::string& name, int hosts);
  // What add() would do, without doing it.
  Outcome plan(const std::string& name, int hosts, Placement* out) const;
  // Re-installs a known placement (reloading saved state): hosts and links must be free and
  // satisfy the LaaS conditions (the independent checker's rules).
  Outcome add_explicit(const std::string& name, int requested, const Placement& placement);
  // What add_explicit() would say, without doing it.
  Outcome check_explicit(const std::string& name, int requested, const Placement& placement) const;
  // A placement chosen for a new tenant (not a saved one): check_explicit, and where the
  // placer keeps the management-way rule (management_way.h) that too, the refusal naming the
  // leaf.
  Outcome check_new_placement(const std::string& name, int requested,
                              const Placement& placement) const;
  // Places a tenant on the hosts an administrator chose; links are chosen to satisfy the LaaS
  // conditions (and the management-way rule where the placer keeps it), or the request is
  // refused saying which condition fails.
  Outcome add_on_hosts(const std::string& name, const std::vector<HostId>& hosts, bool dry_run,
                       Placement* out);
  // Re-installs a saved tenant on a fabric that may have faults: its hosts and links (down or
  // faulty ones included) must be unheld, the placement as made must satisfy the LaaS
  // conditions, and the repairs replay onto it. Nothing is re-searched.
  Outcome restore(const std::string& name, int requested, const Placement& intended,
                  const std::vector<Repair>& repairs);
  Outcome remove(const std::string& name);
  void set_faulty(LinkId link, bool faulty) { state_.set_faulty(link, faulty); }
  // Replaces the fault set (see Faults). Tenants keep everything they hold.
  void set_faults(const Faults& faults);
  const Faults& faults() const { return faults_; }
  // Drained (Faults::drained) and not faulty: out of service, but it works.
  bool link_drained(LinkId l) const {
    return l >= 0 && l < static_cast<LinkId>(drained_.size()) && drained_[l];
  }
  // After set_faults: undoes repairs whose faults have cleared (the tenant returns to its
  // placement as made, so its routes are bit-identical to before the fault), then repairs every
  // tenant routing over a faulty link where a free replacement column keeps Theorems 1-2 (checked
  // by the independent checker) without touching any other tenant. One line per change.
  std::vector<std::string> reconcile();
  Health health(const Tenant& t) const;
  // How reconcile() names links in its log lines (default: model switch names and ports).
  void set_link_namer(std::function<std::string(LinkId)> namer) { namer_ = std::move(namer); }
  // How refusals name a leaf, (level 1, index) (default: the model switch name).
  void set_switch_namer(std::function<std::string(int, int)> namer) {
    switch_namer_ = std::move(namer);
  }
  // Keeps hosts out of every placement (the SM's host, configured management ports). Hosts
  // already held by a tenant are skipped and returned.
  std::vector<HostId> reserve(const std::vector<HostId>& hosts);
  // Returns reserved hosts to the free pool (a drained host resumed); others are left alone.
  void unreserve(const std::vector<HostId>& hosts);
  // Keeps one working up-link of `leaf` out of every placement -- the highest free column, so
  // that placements, which take the lowest first, rarely notice -- and returns it; none when
  // the leaf has no free working up-link (a management leaf whose up-links a tenant
  // took all of reaches the rest of the fabric only over that tenant's links).
  std::optional<LinkId> reserve_uplink(int leaf);

  const Tenant* find(const std::string& name) const;
  const std::map<std::string, Tenant>& tenants() const { return tenants_; }

  // On a rail-optimized fabric, each leaf's rail ([leaf]; empty: one rail): the
  // LaaS conditions are then checked rail by rail (check::TenantView::leaf_rail).
  void set_leaf_rails(std::vector<int> leaf_rail) { leaf_rail_ = std::move(leaf_rail); }
  const std::vector<int>& leaf_rails() const { return leaf_rail_; }

 private:
  // What the independent checker is given of a placement.
  check::TenantView shape_view(const std::string& name, const std::vector<HostId>& hosts,
                               const std::vector<LinkId>& links) const;
  Outcome validate_new(const std::string& name, int hosts) const;
  bool undo_cleared(Tenant& t, std::vector<std::string>& log);
  bool try_repair(Tenant& t, LinkId broken, std::vector<std::string>& log);
  std::string link_text(LinkId l) const;
  std::string leaf_text(int leaf) const;
  // Why no placement of `hosts` exists when only the management-way rule stands in the way
  // (management_way.h): the leaf it would cut off, else "".
  std::string management_way_note(int hosts) const;
  Outcome commit(Tenant t);  // assigns a validated placement
  TenantIndex next_index();

  const FatTree tree_;  // before state_, which points into it
  LinkState state_;
  std::unique_ptr<Placer> placer_;
  std::map<std::string, Tenant> tenants_;
  Faults faults_;
  std::vector<char> drained_;  // [link]: drained and not faulty
  std::function<std::string(LinkId)> namer_;
  std::function<std::string(int, int)> switch_namer_;
  std::vector<TenantIndex> free_indices_;
  TenantIndex next_index_ = 0;
  std::vector<int> leaf_rail_;
};

// Tenant names travel into partitions.conf, Slurm and OpenStack files: keep them to
// [A-Za-z0-9_.-], 1..64 characters. Returns an empty string when valid, else the reason.
std::string validate_tenant_name(const std::string& name);

}  // namespace laas::allocator

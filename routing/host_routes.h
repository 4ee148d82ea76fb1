// The routes to hosts, a phase of compute.cc's TableComputation: every switch's entries for
// the hosts of each destination leaf (its ordinary jobs: management, free hosts, hosts by
// owner) and each tenant's routes over its own links (D-mod-K over its hosts' ranks).
// Internal to routing/.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "routing/route_input.h"

namespace laas::routing::phases {

class HostRoutes {
 public:
  // Reads `in` and `mgmt` (filled before the first route_* call), writes `out`'s host columns.
  HostRoutes(const RouteInput& in, const ManagementLinks& mgmt, ModelTables& out);

  // Every switch's entries for the hosts of `leaves`, back to kNoRoute (as compute() starts):
  // the jobs leave some entries alone. With `pods`, only the entries of those pods' leaves
  // and level-2 switches.
  void clear_host_columns(const std::vector<int>& leaves, const std::vector<char>* pods = nullptr);
  // The ordinary jobs of the destination leaves `targets` (all of them in a full run); with
  // `pods`, only their entries at those pods' switches (Job::only_pods).
  void route_ordinary_hosts(const std::vector<int>& targets,
                            const std::vector<char>* pods = nullptr);
  // A tenant's hosts over its own links, keyed by rank among its hosts; with `only`, just its
  // hosts on the leaves it marks (their keys are still ranks among all the tenant's hosts),
  // and with `pods` as well, its other hosts' entries at those pods' switches.
  void route_tenant(int ti, const std::vector<char>* only, const std::vector<char>* pods = nullptr);
  // What each tenant's own routes warned, kept apart so that an incremental run can take an
  // unchanged tenant's from the run before.
  std::vector<std::vector<std::string>>& tenant_warnings() { return tenant_warnings_; }

 private:
  // Which hosts of one destination leaf to route, and how.
  struct Job {
    int cls;                           // tenant index, kFree, or kManagement for "any non-faulty"
    const std::vector<HostId>* dests;  // hosts on the destination leaf
    const std::vector<int>* keys;      // D-mod-K key of each destination
    const std::vector<int>* leaves;    // source leaves to write (gated); others are left alone
    const std::vector<int>* level2;    // level-2 switches that may carry the class (global index)
    // Tenants: keys are ranks 0..n-1 and each source leaf (pod) counts from the first rank it
    // holds, (key - base) mod n: shift permutations then leave every source on distinct
    // up-links, also when the shape has a smaller R leaf (plain key mod K collides there).
    const std::vector<int>* leaf_base = nullptr;  // [leaf]
    const std::vector<int>* pod_base = nullptr;   // [pod]
    int n = 0;
    int owner = kNobody;  // with cls == kOpenOr: whose links besides open ones
    // Source leaves: up-columns they may not use (the management up-links, or everything
    // else), and an owner whose links they use when nothing else leads to the destination.
    const std::vector<ColumnSet>* src_block = nullptr;  // [leaf]
    const std::vector<ColumnSet>* src_extra = nullptr;  // [leaf] fallback up-columns
    bool l2_fallback = false;  // level-2 switches with no way up use their main owner's links
    // Where this job finds no way (no allowed column at the destination or a source leaf),
    // keep the entry an earlier job wrote instead of writing kNoRoute.
    bool keep_on_miss = false;
    // [pod] write only the entries of these pods' switches (none of them the destination's
    // pod), and note no unreachable pair: an incremental run rewriting the entries a level-2
    // link changing hands can move (plan_incremental).
    const std::vector<char>* only_pods = nullptr;

    bool writes_pod(int pod) const { return !only_pods || (*only_pods)[pod]; }
  };

  // Per class (and owner, for kOpenOr), the up-columns allowed() accepts at every leaf and
  // level-2 switch: route_leaf asks for the same few classes once per destination leaf, and
  // thousands of source switches each time.
  struct ClassMasks {
    std::vector<ColumnSet> leaf_up;  // [leaf]
    std::vector<ColumnSet> l2_up;    // [level-2 switch]
  };

  // route_leaf's working space, one per thread.
  struct LeafScratch {
    std::vector<std::uint8_t> cols_ld;
    std::vector<int> down_begin, down_end;
    std::vector<char> top_ok;
    std::vector<std::vector<std::uint8_t>> cols2, cand1, cand2;
    std::vector<ColumnSet> set2, top_cols, cand1_set, cand2_set, reach_pod;
    std::vector<char> l2_reaches;
  };

  // One route_leaf call's destination: the leaf, its allowed up-columns, the keys.
  struct Target {
    int ld, pd, lip;
    const ColumnSet* ld_set;  // allowed up-columns of ld
    int n1;                   // how many (LeafScratch::cols_ld)
    ColumnSet reach_same;     // up-columns of ld's pod whose level-2 switch reaches ld
    bool stable;              // not a tenant's own routes
    bool notes;               // note unreachable pairs as the tenant's warnings
    int nd;
    const HostId* dests;
    const int* keys;
  };

  const ClassMasks& masks_for(int cls, int owner);
  // Writes only the entries of job.dests (hosts of leaf ld): leaves route in parallel.
  void route_leaf(int ld, const Job& job, LeafScratch& sc);
  // The ways towards ld: down from its pod's level-2 switches, down from the top switches and
  // up from other pods' level-2 switches, and up from the source leaves.
  void find_down_columns(Target& d, LeafScratch& sc) const;
  void find_level3_ways(const Job& job, const ClassMasks& masks, const Target& d,
                        LeafScratch& sc) const;
  void find_source_columns(const Job& job, const ClassMasks& masks, const Target& d,
                           LeafScratch& sc) const;
  // The entries, switch by switch (a row each), destinations inner: the hosts of one leaf are
  // neighbouring endpoints, so this stays within a cache line or two per switch.
  void write_unreachable(const Job& job, const Target& d);
  void write_down_in_pod(const Job& job, const Target& d, const LeafScratch& sc);
  void write_down_from_top(const Target& d, const LeafScratch& sc);
  void write_up_from_level2(const Job& job, const Target& d, const LeafScratch& sc);
  void write_source_leaves(const Job& job, const Target& d, const LeafScratch& sc);
  void note_unreachable(int tenant, int leaf, HostId d);
  // body(i, scratch) for i in [0, count), spread over threads. Bodies of different i must
  // write disjoint entries (route_leaf: its destinations' columns) and only read shared state.
  template <class Body>
  void for_each_leaf(int count, Body&& body);
  void route_leaf_jobs(int ld, const std::vector<char>* pods, LeafScratch& sc);

  const RouteInput& in_;
  const ManagementLinks& mgmt_;
  const FatTree& t_;
  ModelTables& out_;
  const int h_, up1_, up2_, p2_, p3_, w3_, l2_per_pod_;
  const std::vector<int>& host_class_;
  const std::vector<int>& owner_;
  const std::vector<char>& faulty_;
  std::vector<int> all_leaves_, mgmt_leaves_, no_leaves_, all_level2_;

  std::vector<int> unreachable_;  // [tenant] pairs noted
  std::vector<std::vector<std::string>> tenant_warnings_;
  std::map<std::pair<int, int>, ClassMasks> masks_;  // (map: references stay valid)
  std::mutex masks_mu_;
};

}  // namespace laas::routing::phases

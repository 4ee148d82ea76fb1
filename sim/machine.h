// The simulated cluster: allocator state, running tenants, and the transactions (ADD/REM) that
// change them. Policies decide *which* tenant to start; the Machine does the starting, timing
// every placement search, re-verifying with the independent checker, and reporting each
// transaction to an optional sink (the --log file).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <queue>
#include <stdexcept>
#include <string>
#include <vector>

#include "allocator/link_state.h"
#include "allocator/placer.h"
#include "sim/metrics.h"
#include "sim/workload.h"

namespace laas::sim {

using allocator::LinkState;
using allocator::Placement;
using allocator::Placer;
using topology::FatTree;

struct Transaction {
  bool add = true;  // false: REM
  double time = 0;
  std::int64_t id = 0;
  int requested = 0;
  const Placement* placement = nullptr;
};
using TransactionSink = std::function<void(const Transaction&)>;

// The independent checker found a violation; what() names the tenant, the rule and the time.
class CheckFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CheckOptions {
  // 0: no checking. 1: check::check_all after every ADD and REM. N > 1: check_tenant_shape on
  // every placement, host/link exclusivity re-derived on every placement, check_all every N
  // transactions and at the end.
  int every = 0;
  // [leaf] its rail on a rail-optimized tree (--rails): placements are checked rail by rail.
  std::vector<int> leaf_rail;
};

struct TenantRecord {
  double start = -1;  // < 0: never started
  double end = -1;
  int hosts_held = 0;
  int l1_links = 0;
  int l2_links = 0;
  bool rejected = false;  // can never be placed, even on an empty cluster
  std::string reason;     // for rejected tenants
};

class Machine {
 public:
  // `candidates`: the placer for opportunistic searches (see Placer::for_candidates); nullptr:
  // `placer` for everything.
  Machine(const FatTree& tree, const Placer& placer, const Workload& work, CheckOptions check,
          TransactionSink sink, const Placer* candidates = nullptr);

  const FatTree& tree() const { return *tree_; }
  const Placer& placer() const { return *placer_; }
  const LinkState& state() const { return state_; }
  const Request& request(int idx) const { return (*work_)[idx]; }
  const TenantRecord& record(int idx) const { return records_[idx]; }
  const std::vector<TenantRecord>& records() const { return records_; }
  const Placement& placement(int idx) const { return placements_[idx]; }

  // Placement search for tenant-size `hosts` on `s` (the live state or a what-if copy), timed.
  std::optional<Placement> search(const LinkState& s, int hosts);
  // The same with the candidates' placer: a backfill candidate or a what-if reservation.
  std::optional<Placement> search_candidate(const LinkState& s, int hosts);
  // Commits p (found on the live state) for tenant idx at time `now`.
  void start(int idx, Placement p, double now);
  void reject(int idx, const std::string& why);
  // Releases every running tenant whose end time is <= now.
  void finish_until(double now);
  double next_end() const;  // +inf when nothing runs
  int running() const { return static_cast<int>(running_count_); }
  // Running tenants as (end time, idx), sorted by end time.
  std::vector<std::pair<double, int>> running_by_end() const;

  Sample sample(double t) const;
  const std::vector<double>& search_us() const { return search_us_; }
  // The same calls in thread CPU time: robust when other processes share the cores.
  const std::vector<double>& search_cpu_us() const { return search_cpu_us_; }
  long checks_run() const { return checks_run_; }
  void final_check();

 private:
  void after_transaction(int idx, bool add);
  void full_check(const std::string& when);

  const FatTree* tree_;
  std::optional<Placement> timed_search(const Placer& placer, const LinkState& s, int hosts);

  const Placer* placer_;
  const Placer* candidates_;
  const Workload* work_;
  CheckOptions check_;
  TransactionSink sink_;
  LinkState state_;
  std::vector<TenantRecord> records_;
  std::vector<Placement> placements_;
  std::vector<char> is_running_;
  using Ending = std::pair<double, int>;
  std::priority_queue<Ending, std::vector<Ending>, std::greater<Ending>> ends_;
  long running_count_ = 0;
  int hosts_requested_ = 0;
  int hosts_held_ = 0;
  int l1_ = 0, l2_ = 0;
  long transactions_ = 0;
  long checks_run_ = 0;
  std::vector<double> search_us_;
  std::vector<double> search_cpu_us_;
};

}  // namespace laas::sim

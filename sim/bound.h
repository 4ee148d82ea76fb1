// An upper bound on what any link-isolating allocator can do on a workload under FIFO
// admission, to measure the LaaS allocator against (docs/simulation.md, "The bound").
//
// The bound is FIFO with free repacking: at every event the queue head starts as soon as the
// multiset {running tenants} + {head} has *some* simultaneous placement under the placement
// rules, as if every running tenant could be moved at no cost. By induction over the queue,
// no FIFO allocator without moves (and none with them) starts any tenant earlier: its running
// set at the head's start is a superset of the bound's, and a placement of a set places each
// subset. So every tenant's start (and the last end) under the bound is a lower bound for the
// allocator's, and its whole-run host utilization an upper bound.
//
// Whether a multiset can be placed at once is decided by an integer program (packing_lp, a
// model of the rules at level 1, solved outside by glpsol: sim/io.h) after two cheap answers:
// too many servers (no), or the LaaS allocator itself placing them all on an empty tree,
// largest first (yes: its placements are legal). Model and loop are pure; the solver is
// passed in.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "allocator/placer.h"
#include "sim/metrics.h"
#include "sim/workload.h"
#include "topology/fat_tree.h"

namespace laas::sim {

// What the model needs of a tree: `units` interchangeable units (leaves, or the rail groups
// of a rail-optimized tree: `rails` leaves each, one server a slot on every one of them), each
// with `slots` server slots and, on each of its leaves, `columns` up-link columns;
// needed[n] = up-link columns a leaf carrying n of one tenant's hosts needs (slimmed trees
// need fewer), n = 0..slots.
struct PackingFabric {
  int units = 0;
  int rails = 1;
  int slots = 0;
  int columns = 0;
  std::vector<int> needed;
};

// Throws std::invalid_argument when the leaves cannot be split into `rails` rails.
PackingFabric packing_fabric(const topology::FatTree& tree, int rails);

// The integer program (CPLEX LP format, as glpsol --lp reads it) whose feasibility says that
// tenants of `sizes` servers can hold their hosts and up-links at once on `fabric`, each by
// Theorems 1-2 at level 1: either one unit and no links, or Q units of D servers plus at most
// one unit of R < D (N = Q*D + R), the Q units' leaves on one common set C of needed[D]
// columns, the remainder's leaves on needed[R] columns of C; no host slot or up-link held
// twice. What it leaves out (each makes the bound larger, never smaller): level-2 links and
// pods (tenants across pods are taken to find level-2 columns whenever level 1 allows), and
// on rail trees the rule that two rails' remainder leaves share a column.
std::string packing_lp(const PackingFabric& fabric, const std::vector<int>& sizes);

// A solver's answer for one model.
enum class Solved { kFeasible, kInfeasible, kUnknown };
using LpSolver = std::function<Solved(const std::string& lp)>;

// Decides whether a multiset of tenant sizes (servers) can be placed at once; answers are
// remembered. kUnknown from the solver (time limit) counts as feasible, so the bound stays a
// bound; such answers are counted.
//
// Without a solver (an empty LpSolver) a multiset counts as placeable only when the LaaS
// allocator places it on an empty tree: fifo_bound then runs FIFO with the allocator re-placing
// every running tenant at each event -- a link-isolating allocator that moves tenants, with every
// rule of the real one (level 2, rails) -- and, since the oracle with a solver says yes at least
// whenever this one does, every start is no earlier than the bound's: its utilization is a
// figure the bound is proven to reach at least.
class PackingOracle {
 public:
  PackingOracle(const topology::FatTree& tree, int rails, LpSolver solver);
  bool feasible(std::vector<int> sizes);

  struct Counts {
    long asked = 0, remembered = 0, too_large = 0, by_allocator = 0, solved = 0, unknown = 0;
    long not_by_allocator = 0;  // without a solver: the allocator could not place them (no)
  };
  const Counts& counts() const { return counts_; }

 private:
  bool placed_by_allocator(const std::vector<int>& sizes) const;
  const topology::FatTree& tree_;
  int rails_;
  // The LaaS allocator (per server on rail trees), built once: it answers most questions.
  std::unique_ptr<allocator::Placer> placer_;
  PackingFabric fabric_;
  LpSolver solver_;
  std::map<std::vector<int>, bool> memo_;
  Counts counts_;
};

// The sweep's and the run's names of the two FIFO-with-repacking runs.
inline constexpr const char* kBoundAlgorithm = "bound";
// FIFO with the LaaS allocator re-placing every running tenant at each event (no solver).
inline constexpr const char* kRepackAlgorithm = "laas-repack";
// Either of the two: no placer, FIFO only, figures from fifo_bound.
inline bool is_repacking(const std::string& algorithm) {
  return algorithm == kBoundAlgorithm || algorithm == kRepackAlgorithm;
}

struct BoundResult {
  std::vector<double> start;  // [tenant] earliest start under FIFO; < 0: never placeable
  bool saturated = false;
  Utilization window;  // the paper's window, as laas-sim computes it (an indication only)
  Utilization whole;   // first arrival to last end: an upper bound for any FIFO allocator
  int placed = 0, rejected = 0;
  PackingOracle::Counts oracle;
  double wall_s = 0;
};

// FIFO with free repacking over `work` (sizes in host ports, servers of `rails` ports each).
BoundResult fifo_bound(const topology::FatTree& tree, int rails, const Workload& work,
                       PackingOracle& oracle);

// Compares an allocator's run with the bound: every tenant both placed must start no earlier
// under the bound, and the bound's whole-run host utilization must be at least the
// allocator's. Returns one line per violation (empty: consistent). `starts` are the
// allocator's (< 0: not placed).
std::vector<std::string> check_against_bound(const BoundResult& bound,
                                             const std::vector<double>& starts,
                                             double whole_host_utilization);

}  // namespace laas::sim

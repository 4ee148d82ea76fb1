#include "sim/bound.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "allocator/placer.h"
#include "topology/servers.h"

namespace laas::sim {

PackingFabric packing_fabric(const topology::FatTree& tree, int rails) {
  if (rails < 1 || tree.num_leaves() % rails != 0 || tree.leaves_per_pod() % rails != 0)
    throw std::invalid_argument("the tree's leaves cannot be split into " + std::to_string(rails) +
                                " rails");
  PackingFabric f;
  f.units = tree.num_leaves() / rails;
  f.rails = rails;
  f.slots = tree.hosts_per_leaf();
  f.columns = tree.up_columns(1);
  for (int n = 0; n <= f.slots; ++n) f.needed.push_back(tree.columns_needed(1, n));
  return f;
}

namespace {

// Terms of one linear expression, written one a line (glpk reads lines of limited length).
class Expr {
 public:
  void add(long coef, const std::string& var) {
    if (coef == 0) return;
    out_ << "  " << (coef < 0 ? "- " : "+ ") << (coef < 0 ? -coef : coef) << " " << var << "\n";
    empty_ = false;
  }
  bool empty() const { return empty_; }
  std::string text() const { return out_.str(); }

 private:
  std::ostringstream out_;
  bool empty_ = true;
};

std::string name(const char* kind, std::initializer_list<int> idx) {
  std::string s = kind;
  for (int i : idx) s += "_" + std::to_string(i);
  return s;
}

// packing_lp's model as it is written: the rows, the variables by kind, the objective, and
// the shared capacities (host slots per unit, each leaf's up-link columns).
class PackingModel {
 public:
  explicit PackingModel(const PackingFabric& f)
      : f_(f), unit_slots_(f.units), link_(static_cast<size_t>(f.units) * f.rails * f.columns) {}

  // Tenant t of n hosts: exactly one shape. False when it has none.
  bool add_tenant(int t, int n) {
    Expr choice;
    if (n <= f_.slots) add_one_unit(t, n, choice);
    for (int d = 1; d <= std::min(n, f_.slots); ++d) add_spread(t, n, d, choice);
    constraint(choice, "=", 1);
    return !choice.empty();
  }

  std::string text(const std::vector<int>& sizes, bool impossible) {
    for (int u = 0; u < f_.units; ++u) constraint(unit_slots_[u], "<=", f_.slots);
    for (auto& e : link_) constraint(e, "<=", 1);
    std::ostringstream lp;
    lp << "\\ laas-sim bound: can tenants of sizes";
    for (int n : sizes) lp << " " << n;
    lp << " be placed at once (" << f_.units << " units of " << f_.slots << " slots, " << f_.rails
       << " rails, " << f_.columns << " columns)\n";
    lp << "minimize\n obj:\n" << (objective_.empty() ? "  + 0 zero_\n" : objective_.text());
    lp << "subject to\n" << rows_.str();
    if (impossible) lp << " never: + 1 zero_ >= 1\n";
    lp << "bounds\n";
    if (objective_.empty() || impossible) lp << " zero_ = 0\n";
    for (auto& w : continuous_) lp << " 0 <= " << w << " <= 1\n";
    lp << "binary\n";
    for (auto& b : binaries_) lp << " " << b << "\n";
    lp << "end\n";
    return lp.str();
  }

 private:
  void constraint(const Expr& e, const char* sense, long rhs) {
    if (e.empty()) {
      if ((std::string(sense) == "<=" && rhs < 0) || (std::string(sense) == "=" && rhs != 0) ||
          (std::string(sense) == ">=" && rhs > 0))
        rows_ << " r" << row_++ << ": + 0 infeasible_ = 1\n";  // an empty row that cannot hold
      return;
    }
    rows_ << " r" << row_++ << ":\n" << e.text() << "  " << sense << " " << rhs << "\n";
  }
  Expr& link_at(int u, int r, int c) {
    return link_[(static_cast<size_t>(u) * f_.rails + r) * f_.columns + c];
  }

  // One unit, no links: a tenant on one leaf (one leaf per rail) reaches itself.
  void add_one_unit(int t, int n, Expr& choice) {
    const std::string s = name("o", {t});
    binaries_.push_back(s);
    choice.add(1, s);
    Expr where;
    for (int u = 0; u < f_.units; ++u) {
      const std::string e = name("e", {t, u});
      binaries_.push_back(e);
      where.add(1, e);
      unit_slots_[u].add(n, e);
    }
    where.add(-1, s);
    constraint(where, "=", 0);
  }

  // q = n / d full units of d hosts and a remainder unit of r = n % d, on a column set C of
  // needed[d] columns.
  void add_spread(int t, int n, int d, Expr& choice) {
    const int q = n / d, r = n % d;
    const int units_used = q + (r > 0 ? 1 : 0);
    if (units_used < 2 || units_used > f_.units || f_.needed[d] > f_.columns) return;
    const std::string s = name("s", {t, d});
    binaries_.push_back(s);
    choice.add(1, s);
    Expr full, rem, cols;
    for (int c = 0; c < f_.columns; ++c) {
      const std::string z = name("z", {t, d, c});
      binaries_.push_back(z);
      cols.add(1, z);
      objective_.add(1, z);
    }
    cols.add(-f_.needed[d], s);
    constraint(cols, "=", 0);
    for (int u = 0; u < f_.units; ++u) add_spread_unit(t, d, r, u, full, rem);
    full.add(-q, s);
    constraint(full, "=", 0);
    if (r > 0) {
      rem.add(-1, s);
      constraint(rem, "=", 0);
    }
  }

  // Unit u as a full unit (a) or the remainder (b) of tenant t's shape d.
  void add_spread_unit(int t, int d, int r, int u, Expr& full, Expr& rem) {
    const std::string a = name("a", {t, d, u});
    binaries_.push_back(a);
    full.add(1, a);
    unit_slots_[u].add(d, a);
    // A full unit's leaves hold every column of C: w >= a + z - 1.
    for (int c = 0; c < f_.columns; ++c) {
      const std::string w = name("w", {t, d, u, c});
      continuous_.push_back(w);
      Expr e;
      e.add(1, w);
      e.add(-1, a);
      e.add(-1, name("z", {t, d, c}));
      constraint(e, ">=", -1);
      for (int rail = 0; rail < f_.rails; ++rail) link_at(u, rail, c).add(1, w);
    }
    if (r == 0) return;
    const std::string b = name("b", {t, d, u});
    binaries_.push_back(b);
    rem.add(1, b);
    unit_slots_[u].add(r, b);
    Expr one;  // a unit is full or the remainder, not both
    one.add(1, a);
    one.add(1, b);
    constraint(one, "<=", 1);
    // Each remainder leaf: needed[r] columns, all of them in C.
    for (int rail = 0; rail < f_.rails; ++rail) {
      Expr count;
      for (int c = 0; c < f_.columns; ++c) {
        const std::string v = name("v", {t, d, u, rail, c});
        binaries_.push_back(v);
        count.add(1, v);
        link_at(u, rail, c).add(1, v);
        Expr sub;
        sub.add(1, v);
        sub.add(-1, name("z", {t, d, c}));
        constraint(sub, "<=", 0);
      }
      count.add(-f_.needed[r], b);
      constraint(count, "=", 0);
    }
  }

  const PackingFabric& f_;
  std::ostringstream rows_;
  std::vector<std::string> binaries_, continuous_;
  Expr objective_;
  int row_ = 0;
  std::vector<Expr> unit_slots_;
  std::vector<Expr> link_;
};

}  // namespace

std::string packing_lp(const PackingFabric& f, const std::vector<int>& sizes) {
  PackingModel model(f);
  bool impossible = false;
  for (int t = 0; t < static_cast<int>(sizes.size()); ++t)
    if (!model.add_tenant(t, sizes[t])) impossible = true;
  return model.text(sizes, impossible);
}

PackingOracle::PackingOracle(const topology::FatTree& tree, int rails, LpSolver solver)
    : tree_(tree),
      rails_(rails),
      placer_(rails > 1
                  ? allocator::make_server_placer("laas", topology::rail_servers(tree, rails).ports)
                  : allocator::make_placer("laas")),
      fabric_(packing_fabric(tree, rails)),
      solver_(std::move(solver)) {}

bool PackingOracle::placed_by_allocator(const std::vector<int>& sizes) const {
  allocator::LinkState state(tree_);
  for (size_t i = 0; i < sizes.size(); ++i) {
    auto r = placer_->place(state, sizes[i] * rails_);
    if (!r.placement) return false;
    state.assign(static_cast<allocator::TenantIndex>(i), *r.placement);
  }
  return true;
}

bool PackingOracle::feasible(std::vector<int> sizes) {
  ++counts_.asked;
  std::sort(sizes.rbegin(), sizes.rend());
  if (auto it = memo_.find(sizes); it != memo_.end()) {
    ++counts_.remembered;
    return it->second;
  }
  bool ok;
  if (std::accumulate(sizes.begin(), sizes.end(), 0L) >
      static_cast<long>(fabric_.units) * fabric_.slots) {
    ++counts_.too_large;
    ok = false;
  } else if (placed_by_allocator(sizes)) {
    ++counts_.by_allocator;
    ok = true;
  } else if (!solver_) {
    ++counts_.not_by_allocator;
    ok = false;
  } else {
    ++counts_.solved;
    const Solved s = solver_(packing_lp(fabric_, sizes));
    if (s == Solved::kUnknown) ++counts_.unknown;
    ok = s != Solved::kInfeasible;
  }
  memo_.emplace(std::move(sizes), ok);
  return ok;
}

BoundResult fifo_bound(const topology::FatTree& tree, int rails, const Workload& work,
                       PackingOracle& oracle) {
  const auto wall0 = std::chrono::steady_clock::now();
  BoundResult res;
  res.start.assign(work.size(), -1);
  std::vector<int> order(work.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return work[a].arrival < work[b].arrival; });
  auto servers = [&](int i) { return (work[i].size + rails - 1) / rails; };
  const int capacity = tree.num_hosts();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<int> running;  // tenant indices
  std::vector<int> queue;
  size_t next = 0, head = 0;
  int busy = 0;
  double first_wait = inf, last_start = -inf, last_end = -inf;
  const double first_arrival = order.empty() ? 0 : work[order[0]].arrival;
  std::vector<Sample> timeline;
  while (next < order.size() || head < queue.size() || !running.empty()) {
    double next_end = inf;
    for (int i : running) next_end = std::min(next_end, res.start[i] + work[i].runtime);
    const double t_arr = next < order.size() ? work[order[next]].arrival : inf;
    const double now = std::min(t_arr, next_end);
    if (now == inf) break;
    for (size_t k = 0; k < running.size();) {
      const int i = running[k];
      if (res.start[i] + work[i].runtime <= now) {
        busy -= work[i].size;
        last_end = std::max(last_end, res.start[i] + work[i].runtime);
        running[k] = running.back();
        running.pop_back();
      } else {
        ++k;
      }
    }
    for (; next < order.size() && work[order[next]].arrival == now; ++next)
      queue.push_back(order[next]);
    while (head < queue.size()) {
      const int i = queue[head];
      std::vector<int> sizes{servers(i)};
      if (work[i].size > capacity || !oracle.feasible(sizes)) {
        ++res.rejected;  // no placement even alone: FIFO skips it
        ++head;
        continue;
      }
      if (busy + work[i].size > capacity) break;
      for (int j : running) sizes.push_back(servers(j));
      if (!oracle.feasible(sizes)) break;
      res.start[i] = now;
      busy += work[i].size;
      running.push_back(i);
      last_start = std::max(last_start, now);
      ++res.placed;
      ++head;
    }
    if (head < queue.size() && first_wait == inf) first_wait = now;
    Sample s;
    s.t = now;
    s.hosts_requested = s.hosts_held = busy;
    timeline.push_back(s);
  }
  Capacity cap{capacity, tree.num_links(1), tree.num_links(2), false};
  res.saturated = first_wait != inf;
  const double w0 = res.saturated ? first_wait : first_arrival;
  res.window = integrate(timeline, cap, w0, last_start > w0 ? last_start : w0);
  res.whole = integrate(timeline, cap, first_arrival, std::max(first_arrival, last_end));
  res.oracle = oracle.counts();
  res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return res;
}

std::vector<std::string> check_against_bound(const BoundResult& bound,
                                             const std::vector<double>& starts,
                                             double whole_host_utilization) {
  std::vector<std::string> out;
  const size_t n = std::min(bound.start.size(), starts.size());
  // The bound's induction holds when both runs skip the same tenants; if the allocator refused
  // one the bound placed, they hold different work and only legality compares.
  bool same_tenants = bound.start.size() == starts.size();
  for (size_t i = 0; i < n; ++i) {
    if (starts[i] >= 0 && bound.start[i] < 0)
      out.push_back("tenant " + std::to_string(i) + " was placed, but no placement of it exists");
    if (starts[i] < 0 && bound.start[i] >= 0) same_tenants = false;
  }
  if (!same_tenants) return out;
  for (size_t i = 0; i < n; ++i) {
    if (starts[i] >= 0 && starts[i] < bound.start[i])
      out.push_back("tenant " + std::to_string(i) + " started at " + format_time(starts[i]) +
                    ", before the earliest start any link-isolating FIFO allocator can give it (" +
                    format_time(bound.start[i]) + ")");
  }
  // 1e-9: rounding of the time integrals only.
  if (whole_host_utilization > bound.whole.hosts + 1e-9) {
    std::ostringstream s;
    s << "whole-run host utilization " << whole_host_utilization * 100 << " % is above the bound's "
      << bound.whole.hosts * 100 << " %";
    out.push_back(s.str());
  }
  return out;
}

}  // namespace laas::sim

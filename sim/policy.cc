#include "sim/policy.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <vector>

namespace laas::sim {
namespace {

// Starts queue heads while they fit. A head that does not fit even with nothing running can
// never be placed: it is rejected instead of blocking the queue forever.
bool run_fifo(double now, Queue& queue, Machine& m) {
  while (!queue.empty()) {
    int head = queue.front();
    auto p = m.search(m.state(), m.request(head).size);
    if (p) {
      m.start(head, std::move(*p), now);
      queue.pop_front();
      continue;
    }
    if (m.running() == 0) {
      m.reject(head, "cannot be placed even on an empty cluster");
      queue.pop_front();
      continue;
    }
    return true;
  }
  return false;
}

class Fifo : public Policy {
 public:
  std::string name() const override { return "fifo"; }
  bool schedule(double now, Queue& queue, Machine& m) override { return run_fifo(now, queue, m); }
};

constexpr allocator::TenantIndex kReservationOwner = std::numeric_limits<int>::max();

// Greedy first fit: every waiting tenant that fits starts, in queue order, with no reservation
// for the head. Large tenants can starve; it bounds what any queue reordering could gain.
class FirstFit : public Policy {
 public:
  explicit FirstFit(PolicyOptions o) : opts_(o) {}
  std::string name() const override { return "firstfit"; }
  bool schedule(double now, Queue& queue, Machine& m) override {
    if (!run_fifo(now, queue, m)) return false;
    int min_failed = std::numeric_limits<int>::max(), examined = 0;
    Queue rest;
    rest.push_back(queue.front());
    for (size_t k = 1; k < queue.size(); ++k) {
      int c = queue[k];
      int size = m.request(c).size;
      if (examined >= opts_.backfill_depth || size > m.state().free_hosts() || size >= min_failed) {
        rest.push_back(c);
        continue;
      }
      ++examined;
      auto p = m.search_candidate(m.state(), size);
      if (!p) {
        min_failed = size;
        rest.push_back(c);
        continue;
      }
      m.start(c, std::move(*p), now);
    }
    queue.swap(rest);
    return true;
  }

 private:
  PolicyOptions opts_;
};

// EASY backfilling (Lifka 1995; Mu'alem and Feitelson 2001) with topology: the head gets a
// reservation (a shadow time and a concrete placement in the state expected then); a later
// tenant may start now if it fits now and either ends by the shadow time or stays clear of the
// reserved hosts and links.
class Backfill : public Policy {
 public:
  explicit Backfill(PolicyOptions o) : opts_(o) {}
  std::string name() const override { return "backfill"; }

  bool schedule(double now, Queue& queue, Machine& m) override {
    if (!run_fifo(now, queue, m)) return false;
    const int head = queue.front();
    const int head_size = m.request(head).size;
    // The reservation stays exact while the head is the same: runtimes are known, so nothing
    // frees earlier than predicted, and backfilled tenants still running at the shadow time
    // were added to the shadow state when they started.
    if (head != reserved_for_ || !(shadow_time_ > now)) {
      reserved_for_ = -1;
      if (!reserve(m, head_size)) return true;
      reserved_for_ = head;
    }
    LinkState& shadow = *shadow_;
    std::optional<Placement>& reserved = reserved_;
    const double shadow_time = shadow_time_;
    // `shadow` is now the state expected at shadow_time, without the head.
    //
    // A candidate that ends by the shadow time is searched on the live state. One that would
    // still run then is searched on `masked`: the live state with the reservation's free hosts
    // and links marked taken, so whatever it finds leaves the reservation intact.
    std::optional<LinkState> masked;
    auto build_masked = [&] {
      masked.emplace(m.state());
      Placement hold;
      for (auto h : reserved->hosts) {
        if (masked->host_owner(h) == allocator::kFree) hold.hosts.push_back(h);
      }
      for (auto l : reserved->links) {
        if (masked->link_owner(l) == allocator::kFree && !masked->link_faulty(l)) {
          hold.links.push_back(l);
        }
      }
      masked->assign(kReservationOwner, hold);
    };
    int examined = 0;
    std::vector<char> started(queue.size(), 0);
    // Once a size finds no placement, no larger tenant is tried on that state in this pass:
    // resources only shrink during a pass and a larger tenant rarely fits where a smaller one
    // does not. A heuristic bounding the searches per pass; it can only miss a backfill, never
    // break the reservation.
    int min_failed_live = std::numeric_limits<int>::max();
    int min_failed_masked = std::numeric_limits<int>::max();
    std::vector<int> failed_live, failed_masked;  // exact sizes that failed, when exhaustive
    bool any = false;
    for (size_t k = 1; k < queue.size() && examined < opts_.backfill_depth; ++k) {
      if (m.state().free_hosts() == 0) break;
      int c = queue[k];
      const Request& r = m.request(c);
      if (r.size > m.state().free_hosts()) continue;
      const bool long_running = now + r.runtime > shadow_time;
      int& min_failed = long_running ? min_failed_masked : min_failed_live;
      auto& failed = long_running ? failed_masked : failed_live;
      if (opts_.skip_larger_after_failure ? r.size >= min_failed
                                          : std::count(failed.begin(), failed.end(), r.size) > 0) {
        continue;
      }
      ++examined;
      if (long_running && !masked) build_masked();
      auto p = m.search_candidate(long_running ? *masked : m.state(), r.size);
      if (!p) {
        min_failed = r.size;
        failed.push_back(r.size);
        continue;
      }
      if (long_running) shadow.assign(c, *p);
      masked.reset();  // rebuilt on demand from the new live state
      m.start(c, std::move(*p), now);
      started[k] = 1;
      any = true;
    }
    if (any) {
      Queue rest;
      for (size_t k = 0; k < queue.size(); ++k) {
        if (!started[k]) rest.push_back(queue[k]);
      }
      queue.swap(rest);
    }
    return true;
  }

 private:
  // Computes the head's reservation into shadow_, reserved_ and shadow_time_.
  bool reserve(Machine& m, int head_size) {
    std::optional<Placement>& reserved = reserved_;
    double& shadow_time = shadow_time_;
    // The head is blocked. Its reservation: the earliest end-time group after whose release
    // (with everything ending earlier) it fits. Fitting is monotone in what is released for
    // any sane placer, so gallop then bisect: O(log n) searches instead of one per group.
    auto ending = m.running_by_end();
    std::vector<size_t> group_end;  // ending[0, group_end[g]) ends by group g's time
    for (size_t i = 0; i < ending.size(); ++i) {
      if (i + 1 == ending.size() || ending[i + 1].first != ending[i].first) {
        group_end.push_back(i + 1);
      }
    }
    auto state_after = [&](size_t g) {
      LinkState s = m.state();
      for (size_t i = 0; i < group_end[g]; ++i)
        s.release(ending[i].second, m.placement(ending[i].second));
      return s;
    };
    // Cheapest bound first: enough free hosts.
    size_t lo = 0;
    {
      int free = m.state().free_hosts();
      size_t i = 0;
      while (lo < group_end.size()) {
        for (; i < group_end[lo]; ++i) free += m.record(ending[i].second).hosts_held;
        if (free >= head_size) break;
        ++lo;
      }
    }
    if (lo >= group_end.size()) return false;  // cannot happen: run_fifo rejects those
    // Gallop: find hi with a fit; lo - 1 is known not to fit.
    size_t hi = lo, step = 1;
    LinkState shadow = state_after(hi);
    for (;;) {
      reserved = m.search_candidate(shadow, head_size);
      if (reserved) break;
      if (hi + 1 >= group_end.size()) return false;  // cannot happen (all released)
      lo = hi + 1;
      hi = std::min(group_end.size() - 1, hi + step);
      step *= 2;
      shadow = state_after(hi);
    }
    while (lo < hi) {  // invariant: fits at hi, not known below lo
      size_t mid = lo + (hi - lo) / 2;
      LinkState s = state_after(mid);
      auto p = m.search_candidate(s, head_size);
      if (p) {
        hi = mid;
        shadow = std::move(s);
        reserved = std::move(p);
      } else {
        lo = mid + 1;
      }
    }
    shadow_time = ending[group_end[hi] - 1].first;
    shadow_ = std::move(shadow);
    return true;
  }

  PolicyOptions opts_;
  int reserved_for_ = -1;            // the head the reservation below is for
  std::optional<LinkState> shadow_;  // the state expected at shadow_time_, without the head
  std::optional<Placement> reserved_;
  double shadow_time_ = 0;
};

}  // namespace

std::unique_ptr<Policy> make_policy(const std::string& name, PolicyOptions opts) {
  if (name == "fifo") return std::make_unique<Fifo>();
  if (name == "backfill") return std::make_unique<Backfill>(opts);
  if (name == "firstfit") return std::make_unique<FirstFit>(opts);
  throw std::invalid_argument("unknown policy '" + name + "' (known: fifo, backfill, firstfit)");
}

}  // namespace laas::sim

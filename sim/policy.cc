#include "sim/policy.h"

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

bool disjoint(const Placement& a, const Placement& b) {
  auto none_common = [](const std::vector<int>& x, const std::vector<int>& y) {
    size_t i = 0, j = 0;
    while (i < x.size() && j < y.size()) {
      if (x[i] == y[j]) return false;
      if (x[i] < y[j]) {
        ++i;
      } else {
        ++j;
      }
    }
    return true;
  };
  return none_common(a.hosts, b.hosts) && none_common(a.links, b.links);
}

// EASY backfilling (Lifka 1995; Mu'alem and Feitelson 2001) with topology: the head gets a
// reservation (a shadow time and a concrete placement in the state expected then); a later
// tenant may start now if it fits now and either ends by the shadow time or leaves the
// reservation placeable.
class Backfill : public Policy {
 public:
  explicit Backfill(PolicyOptions o) : opts_(o) {}
  std::string name() const override { return "backfill"; }

  bool schedule(double now, Queue& queue, Machine& m) override {
    if (!run_fifo(now, queue, m)) return false;
    // The head is blocked. Find its reservation by releasing running tenants in end order.
    const int head = queue.front();
    const int head_size = m.request(head).size;
    LinkState shadow = m.state();
    double shadow_time = std::numeric_limits<double>::infinity();
    std::optional<Placement> reserved;
    auto ending = m.running_by_end();
    for (size_t i = 0; i < ending.size();) {
      double t = ending[i].first;
      for (; i < ending.size() && ending[i].first == t; ++i) {
        shadow.release(ending[i].second, m.placement(ending[i].second));
      }
      reserved = m.search(shadow, head_size);
      if (reserved) {
        shadow_time = t;
        break;
      }
    }
    if (!reserved) return true;  // cannot happen: run_fifo rejects what an empty tree refuses
    // `shadow` is now the state expected at shadow_time, without the head.
    int examined = 0;
    std::vector<char> started(queue.size(), 0);
    bool any = false;
    for (size_t k = 1; k < queue.size() && examined < opts_.backfill_depth; ++k) {
      if (m.state().free_hosts() == 0) break;
      int c = queue[k];
      const Request& r = m.request(c);
      if (r.size > m.state().free_hosts()) continue;
      ++examined;
      auto p = m.search(m.state(), r.size);
      if (!p) continue;
      if (now + r.runtime > shadow_time && !disjoint(*p, *reserved)) {
        // It would still hold resources at the shadow time: the head must fit around it.
        shadow.assign(c, *p);
        auto again = m.search(shadow, head_size);
        if (!again) {
          shadow.release(c, *p);
          continue;
        }
        reserved = std::move(again);
      } else if (now + r.runtime > shadow_time) {
        shadow.assign(c, *p);
      }
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
  PolicyOptions opts_;
};

}  // namespace

std::unique_ptr<Policy> make_policy(const std::string& name, PolicyOptions opts) {
  if (name == "fifo") return std::make_unique<Fifo>();
  if (name == "backfill") return std::make_unique<Backfill>(opts);
  throw std::invalid_argument("unknown policy '" + name + "' (known: fifo, backfill)");
}

}  // namespace laas::sim

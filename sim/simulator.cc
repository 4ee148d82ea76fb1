#include "sim/simulator.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>

namespace laas::sim {

SimResult simulate(const FatTree& tree, const Placer& placer, const Workload& work,
                   const SimOptions& opts, const TransactionSink& sink) {
  auto wall0 = std::chrono::steady_clock::now();
  const long budget_cuts0 = placer.budget_cuts();
  timespec cpu0{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu0);
  auto policy = make_policy(opts.policy, opts.policy_options);
  const auto candidates = placer.for_candidates();
  const long candidate_cuts0 = candidates ? candidates->budget_cuts() : 0;
  Machine m(tree, placer, work, opts.check, sink, candidates.get());

  std::vector<int> order(work.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return work[a].arrival < work[b].arrival; });

  SimResult res;
  Queue queue;
  size_t next = 0;
  const double inf = std::numeric_limits<double>::infinity();
  double first_wait = inf, last_placement = -inf;
  const double first_arrival = order.empty() ? 0 : work[order[0]].arrival;

  while (next < order.size() || !queue.empty() || m.running() > 0) {
    double t_arr = next < order.size() ? work[order[next]].arrival : inf;
    double now = std::min(t_arr, m.next_end());
    if (now == inf) break;  // queue non-empty with nothing running: cannot happen (rejection)
    m.finish_until(now);
    for (; next < order.size() && work[order[next]].arrival == now; ++next) {
      int idx = order[next];
      if (work[idx].size > tree.num_hosts()) {
        m.reject(idx, "requests more hosts than the tree has");
      } else {
        queue.push_back(idx);
      }
    }
    bool blocked = policy->schedule(now, queue, m);
    if (blocked && first_wait == inf) first_wait = now;
    res.timeline.push_back(m.sample(now));
  }
  m.final_check();

  res.tenants = m.records();
  for (const auto& r : res.tenants) {
    if (r.start >= 0) {
      ++res.placed;
      last_placement = std::max(last_placement, r.start);
    }
    if (r.rejected) ++res.rejected;
  }
  double last_end = first_arrival;
  for (const auto& r : res.tenants) last_end = std::max(last_end, r.end);

  Capacity cap{tree.num_hosts(), tree.num_links(1), tree.num_links(2), placer.isolates()};
  res.saturated = first_wait != inf;
  double w0 = res.saturated ? first_wait : first_arrival;
  double w1 = last_placement > w0 ? last_placement : w0;
  res.window = integrate(res.timeline, cap, w0, w1);
  res.whole = integrate(res.timeline, cap, first_arrival, last_end);
  res.search_us = percentiles(m.search_us());
  res.search_cpu_us = percentiles(m.search_cpu_us());
  res.checks_run = m.checks_run();
  res.budget_cuts = placer.budget_cuts() - budget_cuts0 +
                    (candidates ? candidates->budget_cuts() - candidate_cuts0 : 0);
  if (!opts.keep_timeline) res.timeline.clear();
  res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  timespec cpu1{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu1);
  res.cpu_s = (cpu1.tv_sec - cpu0.tv_sec) + (cpu1.tv_nsec - cpu0.tv_nsec) / 1e9;
  return res;
}

}  // namespace laas::sim

#include "sim/metrics.h"

#include <algorithm>
#include <cmath>

namespace laas::sim {

Utilization integrate(const std::vector<Sample>& timeline, const Capacity& cap, double t0,
                      double t1) {
  Utilization u;
  u.t0 = t0;
  u.t1 = t1;
  if (!(t1 > t0) || timeline.empty()) return u;
  double req = 0, held = 0, l1 = 0, l2 = 0, stranded = 0;
  for (size_t i = 0; i < timeline.size(); ++i) {
    double a = std::max(timeline[i].t, t0);
    double b = i + 1 < timeline.size() ? std::min(timeline[i + 1].t, t1) : t1;
    if (b <= a) continue;
    double dt = b - a;
    req += dt * timeline[i].hosts_requested;
    held += dt * timeline[i].hosts_held;
    l1 += dt * timeline[i].l1_links;
    l2 += dt * timeline[i].l2_links;
    stranded += dt * timeline[i].stranded_hosts;
  }
  double span = t1 - t0;
  if (cap.hosts > 0) {
    u.hosts = req / (span * cap.hosts);
    u.hosts_held = held / (span * cap.hosts);
    u.stranded = stranded / (span * cap.hosts);
  }
  if (cap.l1_links > 0) u.l1 = l1 / (span * cap.l1_links);
  if (cap.l2_links > 0) u.l2 = l2 / (span * cap.l2_links);
  int all = cap.l1_links + cap.l2_links;
  if (all > 0) u.links = (l1 + l2) / (span * all);
  u.links_off = cap.isolating ? 1 - u.links : 0;
  return u;
}

Percentiles percentiles(std::vector<double> values) {
  Percentiles p;
  p.count = static_cast<long>(values.size());
  if (values.empty()) return p;
  std::sort(values.begin(), values.end());
  auto rank = [&](double q) {
    auto k = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size())));
    return values[std::min(values.size() - 1, k == 0 ? 0 : k - 1)];
  };
  p.p50 = rank(0.50);
  p.p99 = rank(0.99);
  p.max = values.back();
  double s = 0;
  for (double v : values) s += v;
  p.mean = s / static_cast<double>(values.size());
  return p;
}

}  // namespace laas::sim

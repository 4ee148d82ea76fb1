#include <gtest/gtest.h>

#include "sim/metrics.h"

using namespace laas::sim;

TEST(SimMetrics, IntegratesPiecewiseConstant) {
  // 10 hosts, 4 L1 links, 2 L2 links. 0-2: 5 hosts, 2-6: 10 hosts (held 12?) , 6-: 0.
  std::vector<Sample> tl{{0, 5, 6, 2, 0, 3}, {2, 10, 10, 4, 2, 0}, {6, 0, 0, 0, 0, 0}};
  Capacity cap{10, 4, 2, true};
  auto u = integrate(tl, cap, 0, 8);
  EXPECT_DOUBLE_EQ(u.hosts, (2 * 5 + 4 * 10) / 80.0);
  EXPECT_DOUBLE_EQ(u.hosts_held, (2 * 6 + 4 * 10) / 80.0);
  EXPECT_DOUBLE_EQ(u.l1, (2 * 2 + 4 * 4) / 32.0);
  EXPECT_DOUBLE_EQ(u.l2, (4 * 2) / 16.0);
  EXPECT_DOUBLE_EQ(u.links, (2 * 2 + 4 * 6) / 48.0);
  EXPECT_DOUBLE_EQ(u.links_off, 1 - u.links);
  EXPECT_DOUBLE_EQ(u.stranded, 2 * 3 / 80.0);
  auto w = integrate(tl, cap, 1, 3);  // window cuts samples
  EXPECT_DOUBLE_EQ(w.hosts, (5 + 10) / 20.0);
  cap.isolating = false;
  EXPECT_EQ(integrate(tl, cap, 0, 8).links_off, 0);
  EXPECT_TRUE(integrate(tl, cap, 3, 3).empty());
}

TEST(SimMetrics, Percentiles) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);
  auto p = percentiles(v);
  EXPECT_EQ(p.p50, 50);
  EXPECT_EQ(p.p99, 99);
  EXPECT_EQ(p.max, 100);
  EXPECT_DOUBLE_EQ(p.mean, 50.5);
  EXPECT_EQ(p.count, 100);
  EXPECT_EQ(percentiles({}).count, 0);
}

// Utilization and latency figures computed from a run's timeline. Pure functions.
#pragma once

#include <vector>

namespace laas::sim {

// Cluster occupancy from time t until the next sample's time.
struct Sample {
  double t = 0;
  int hosts_requested = 0;  // sum of requested sizes of running tenants
  int hosts_held = 0;       // hosts actually held (Simple / whole leaves may round up)
  int l1_links = 0;         // allocated level-1 up-links
  int l2_links = 0;         // allocated level-2 up-links
  int stranded_hosts = 0;   // free hosts on leaves with no free up-link: one-leaf tenants only
};

struct Capacity {
  int hosts = 0;
  int l1_links = 0;
  int l2_links = 0;
  bool isolating = true;  // links are dedicated, so unallocated ones can be powered off
};

// Time averages over [t0, t1] as fractions in [0, 1].
struct Utilization {
  double t0 = 0, t1 = 0;
  double hosts = 0;       // requested hosts x time / (all hosts x time): the paper's figure
  double hosts_held = 0;  // held hosts x time / (all hosts x time)
  double l1 = 0, l2 = 0;  // allocated up-links of that level / all up-links of that level
  double links = 0;       // allocated up-links of both levels / all up-links
  double links_off = 0;   // up-links no tenant holds (0 when not isolating)
  double stranded = 0;    // free hosts whose leaf has no free up-link / all hosts
  bool empty() const { return !(t1 > t0); }
};

// Samples must be sorted by t; the last sample holds until t1. An empty interval gives zeros.
Utilization integrate(const std::vector<Sample>& timeline, const Capacity& cap, double t0,
                      double t1);

struct Percentiles {
  double p50 = 0, p99 = 0, max = 0, mean = 0;
  long count = 0;
};

// Nearest-rank percentiles; `values` is taken by value and sorted.
Percentiles percentiles(std::vector<double> values);

}  // namespace laas::sim

// Parameter sweeps: utilization versus average tenant size for several algorithms, the data
// behind the paper's figures. Runs are independent and may use several threads.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "sim/bound.h"
#include "sim/generator.h"
#include "sim/simulator.h"

namespace laas::sim {

struct SweepSpec {
  std::string topology = "xgft(3;18,18,36;1,18,18)";
  std::vector<std::string> dists{"exp", "gauss", "uniform"};
  std::vector<double> means{4, 8, 16, 32, 64, 128, 256, 512};
  std::vector<std::string> algorithms{"laas", "simple", "unconstrained"};
  std::vector<std::string> policies{"fifo"};
  int seeds = 3;  // seeds 1..seeds
  int tenants = 10000;
  double runtime_min = 20, runtime_max = 3000;
  int backfill_depth = 200;
  int jobs = 1;
  // > 1: a rail-optimized tree (servers of `rails` ports, as laas-sim --rails); sizes count
  // servers. Algorithms laas and unconstrained only, and "bound" and "laas-repack".
  int rails = 1;
  // The bound's solver (algorithm "bound": FIFO with free repacking, sim/bound.h); required
  // when the algorithms name it.
  LpSolver solver;
};

struct SweepRow {
  std::string dist;
  double mean = 0;
  std::uint64_t seed = 0;
  std::string algorithm, policy;
  double avg_size = 0;  // mean requested size actually generated
  SimResult result;     // timeline dropped; for "bound", "laas-repack", their figures (no links,
                        // no timings)
  PackingOracle::Counts oracle{};  // those two only: how their packing questions were answered
};

// Rows in a stable order (dist, mean, seed, algorithm, policy) whatever `jobs` is; "bound"
// and "laas-repack" run once per (dist, mean, seed), as FIFO. `progress`, if set, is called after
// each run (from worker threads, serialized). When the algorithms include "bound", every isolating
// FIFO run is checked against it (check_against_bound) and a violation throws CheckFailure.
std::vector<SweepRow> run_sweep(const SweepSpec& spec,
                                const std::function<void(const SweepRow&)>& progress = nullptr);

// One line per run.
void write_sweep_runs_csv(std::ostream& out, const std::vector<SweepRow>& rows);
// Mean and standard deviation over seeds, one line per (dist, mean, algorithm, policy).
void write_sweep_summary_csv(std::ostream& out, const std::vector<SweepRow>& rows);

// A gnuplot script drawing, for one distribution, host utilization versus average tenant size
// from the summary CSV (one line per algorithm/policy), into png_path.
std::string sweep_plot_script(const std::string& summary_csv, const std::string& dist,
                              const std::vector<std::string>& series, const std::string& png_path);
// Links that could be powered off versus host utilization, every isolating run of the sweep.
std::string links_off_plot_script(const std::string& runs_csv, const std::string& png_path);

}  // namespace laas::sim

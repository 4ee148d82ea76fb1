// laas-sim: scheduling simulator over the LaaS allocator (see docs/simulation.md).
//   laas-sim --topology T --workload FILE --algorithm laas|simple|unconstrained|bound
//            --policy fifo|backfill [--seed S] [--json] [--log FILE] [--csv FILE] [--check]
//   laas-sim gen   ...   workload generator
//   laas-sim sweep ...   utilization versus tenant size, CSV + PNG
//   laas-sim audit ...   replay a --log file through the independent checker
// One function per subcommand over a shared option layer (tree, rails, the bound's solver);
// one place maps errors to exit statuses.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "allocator/placer.h"
#include "sim/audit.h"
#include "sim/bound.h"
#include "sim/generator.h"
#include "sim/io.h"
#include "sim/simulator.h"
#include "sim/sweep.h"
#include "topology/servers.h"
#include "util/cli_parse.h"

using namespace laas;
using namespace laas::sim;

namespace {

constexpr const char* kDefaultTree = "xgft(3;18,18,36;1,18,18)";

// ---- the shared option layer ------------------------------------------------------------

struct TreeOptions {
  std::string topology = kDefaultTree;
  int rails = 1;
};

void add_topology(CLI::App* app, TreeOptions& o, const char* what = "fat-tree spec") {
  app->add_option("--topology", o.topology, std::string(what) + ", xgft(...) or pgft(...)")
      ->capture_default_str();
}

void add_rails(CLI::App* app, TreeOptions& o) {
  app->add_option("--rails", o.rails,
                  "rail-optimized tree: servers with R ports, one on each of R rail "
                  "leaves (leaf i is rail i mod R of group i / R, as laas-topogen --rails); a "
                  "tenant of size N takes N whole servers (N x R ports); laas, unconstrained "
                  "bound or laas-repack")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
}

struct BoundOptions {
  double seconds = 5;
};

void add_bound(CLI::App* app, BoundOptions& o) {
  app->add_option("--bound-seconds", o.seconds,
                  "time limit of each of the bound's integer programs (glpsol); an unsolved "
                  "one counts as placeable, so the bound stays a bound")
      ->capture_default_str();
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> v;
  std::stringstream ss(s);
  std::string f;
  while (std::getline(ss, f, ',')) {
    if (!f.empty()) v.push_back(f);
  }
  return v;
}

std::vector<double> parse_means(const std::string& text) {
  std::vector<double> v;
  for (auto& f : split(text)) {
    try {
      size_t used = 0;
      double x = std::stod(f, &used);
      if (used != f.size() || !(x > 0)) throw std::invalid_argument("");
      v.push_back(x);
    } catch (const std::exception&) {
      throw std::invalid_argument("bad mean '" + f + "' in --means");
    }
  }
  return v;
}

void parse_range(const std::string& text, double* lo, double* hi) {
  auto colon = text.find(':');
  try {
    size_t u1 = 0, u2 = 0;
    std::string a = text.substr(0, colon);
    *lo = std::stod(a, &u1);
    if (colon == std::string::npos) {
      *hi = *lo;
      if (u1 != a.size()) throw std::invalid_argument("");
    } else {
      std::string b = text.substr(colon + 1);
      *hi = std::stod(b, &u2);
      if (u1 != a.size() || u2 != b.size()) throw std::invalid_argument("");
    }
  } catch (const std::exception&) {
    throw std::invalid_argument("bad range '" + text + "' (expected MIN:MAX)");
  }
}

std::ofstream open_out(const std::string& path) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error(path + ": cannot open for writing");
  return f;
}

// ---- run (no subcommand) ------------------------------------------------------------------

struct RunOptions {
  TreeOptions tree;
  BoundOptions bound;
  std::string workload, algorithm = "laas", policy = "fifo";
  std::string log_path, csv_path, timeline_path, summary_path, label;
  std::uint64_t seed = 0;
  bool json = false, check = false, exhaustive = false, against_bound = false;
  bool management_way = false;
  bool whole_leaves = false;
  int check_every = 1, depth = 200;
};

void add_run_options(CLI::App& app, RunOptions& o) {
  add_topology(&app, o.tree);
  add_rails(&app, o.tree);
  add_bound(&app, o.bound);
  app.add_option("--workload", o.workload, "workload: CSV id,size,arrival,runtime or *.swf[.gz]");
  app.add_option("--algorithm", o.algorithm,
                 "laas | simple | unconstrained | bound (FIFO with free repacking: what any "
                 "link-isolating allocator can at best do) | laas-repack (FIFO with the "
                 "allocator re-placing every running tenant at each event: at most the bound)")
      ->capture_default_str();
  app.add_option("--policy", o.policy, "fifo | backfill | firstfit (analysis only: no reservation)")
      ->capture_default_str();
  app.add_option("--seed", o.seed, "accepted for symmetry with gen; runs are deterministic");
  app.add_flag("--whole-leaves", o.whole_leaves,
               "no two tenants share a leaf (laas-sdn's default: its SM sets no SL2VL drop)");
  app.add_flag("--json", o.json, "print one JSON object");
  app.add_flag("--management-way", o.management_way,
               "laas: never leave a leaf shared by two or more owners without a free up-link, as "
               "the plugin places where the switches drop packets between owners (qos TRUE)");
  app.add_option("--log", o.log_path, "write every ADD/REM with hosts and links");
  app.add_option("--csv", o.csv_path, "write one line per tenant");
  app.add_option("--timeline", o.timeline_path, "write the occupancy at every event time");
  app.add_option("--summary", o.summary_path,
                 "append one CSV line of figures to this file (header if new)");
  app.add_option("--label", o.label, "first column of the --summary line");
  app.add_flag("--check", o.check, "re-verify with the independent checker (see --check-every)");
  app.add_option("--check-every", o.check_every,
                 "1: full check after every ADD/REM; N: shape-check each placement, full check "
                 "every N transactions")
      ->capture_default_str();
  app.add_flag("--against-bound", o.against_bound,
               "also compute the bound (FIFO only) and fail if the run beats it");
  app.add_option("--backfill-depth", o.depth, "tenants examined behind the head per pass")
      ->capture_default_str();
  app.add_flag("--backfill-exhaustive", o.exhaustive,
               "search every candidate, not only sizes below the smallest that failed");
}

void print_text(const std::string& label, const SimResult& r) {
  auto pct = [](double x) { return x * 100; };
  std::printf("%s\n", label.c_str());
  std::printf("  window [%s, %s]%s\n", format_time(r.window.t0).c_str(),
              format_time(r.window.t1).c_str(),
              r.saturated ? "" : " (no tenant ever waited: from the first arrival)");
  std::printf("  host utilization      %6.2f %%  (held %6.2f %%)\n", pct(r.window.hosts),
              pct(r.window.hosts_held));
  std::printf("  L1 up-link util.      %6.2f %%\n", pct(r.window.l1));
  std::printf("  L2 up-link util.      %6.2f %%\n", pct(r.window.l2));
  std::printf("  links off (could be)  %6.2f %%\n", pct(r.window.links_off));
  std::printf("  stranded free hosts   %6.2f %%  (free, but their leaf has no free up-link)\n",
              pct(r.window.stranded));
  std::printf("  whole run: host %.2f %%, L1 %.2f %%, L2 %.2f %% over [%s, %s]\n",
              pct(r.whole.hosts), pct(r.whole.l1), pct(r.whole.l2), format_time(r.whole.t0).c_str(),
              format_time(r.whole.t1).c_str());
  std::printf("  placed %d, rejected %d\n", r.placed, r.rejected);
  std::printf("  placer calls %ld: p50 %.1f us, p99 %.1f us, max %.1f us (wall clock)\n",
              r.search_us.count, r.search_us.p50, r.search_us.p99, r.search_us.max);
  std::printf("  placer CPU time:  p50 %.1f us, p99 %.1f us, max %.1f us\n", r.search_cpu_us.p50,
              r.search_cpu_us.p99, r.search_cpu_us.max);
  std::printf("  refused after a search bound (not proven): %ld\n", r.budget_cuts);
  if (r.checks_run) std::printf("  checker: %ld full checks, no violation\n", r.checks_run);
  std::printf("  wall %.3f s, CPU %.3f s\n", r.wall_s, r.cpu_s);
}

// How a repacking run's packing questions beyond the cheap ones were answered (the run's
// summary and the sweep's progress lines).
std::string packings_answered(const std::string& algorithm, const PackingOracle::Counts& c) {
  if (algorithm == kRepackAlgorithm)
    return std::to_string(c.by_allocator) + " placed by the allocator, " +
           std::to_string(c.not_by_allocator) + " not";
  return std::to_string(c.by_allocator) + " by the allocator, " + std::to_string(c.solved) +
         " solved, " + std::to_string(c.unknown) + " unsolved in time";
}

nlohmann::json bound_json(const BoundResult& b) {
  nlohmann::json j;
  j["host_utilization"] = b.window.hosts;
  j["whole_host_utilization"] = b.whole.hosts;
  j["saturated"] = b.saturated;
  j["window"] = {{"t0", b.window.t0}, {"t1", b.window.t1}};
  j["placed"] = b.placed;
  j["rejected"] = b.rejected;
  j["packings"] = {{"asked", b.oracle.asked},
                   {"remembered", b.oracle.remembered},
                   {"too_large", b.oracle.too_large},
                   {"by_allocator", b.oracle.by_allocator},
                   {"solved", b.oracle.solved},
                   {"unsolved", b.oracle.unknown},
                   {"not_by_allocator", b.oracle.not_by_allocator}};
  j["wall_s"] = b.wall_s;
  return j;
}

void append_summary(const RunOptions& o, const topology::FatTree& tree, size_t tenants,
                    const SimResult& r) {
  bool fresh = !std::ifstream(o.summary_path).good();
  std::ofstream f(o.summary_path, std::ios::app);
  if (!f) throw std::runtime_error(o.summary_path + ": cannot open for writing");
  if (fresh) {
    f << "label,workload,topology,algorithm,policy,tenants,host_util,held_host_util,l1_util,"
         "l2_util,links_off,whole_host_util,window_t0,window_t1,placed,rejected,"
         "placer_calls,alloc_us_p50,alloc_us_p99,alloc_us_max,wall_s,cpu_s,alloc_cpu_us_p50,"
         "alloc_cpu_us_p99,alloc_cpu_us_max\n";
  }
  char buf[512];
  std::snprintf(
      buf, sizeof buf, "%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%s,%s,%d,%d,%ld,%.2f,%.2f,%.2f,%.3f",
      r.window.hosts, r.window.hosts_held, r.window.l1, r.window.l2, r.window.links_off,
      r.whole.hosts, format_time(r.window.t0).c_str(), format_time(r.window.t1).c_str(), r.placed,
      r.rejected, r.search_us.count, r.search_us.p50, r.search_us.p99, r.search_us.max, r.wall_s);
  char cpu[128];
  std::snprintf(cpu, sizeof cpu, ",%.3f,%.2f,%.2f,%.2f", r.cpu_s, r.search_cpu_us.p50,
                r.search_cpu_us.p99, r.search_cpu_us.max);
  std::string topo_text = tree.spec().text();  // commas become spaces: CSV-safe
  std::replace(topo_text.begin(), topo_text.end(), ',', ' ');
  f << o.label << ',' << o.workload << ',' << topo_text << ',' << o.algorithm << ',' << o.policy
    << ',' << tenants << ',' << buf << cpu << '\n';
}

// The bound, or with `repack` the allocator re-placing every running tenant (no solver).
BoundResult compute_bound(const topology::FatTree& tree, const RunOptions& o, const Workload& w,
                          bool repack = false) {
  if (o.policy != "fifo")
    throw std::invalid_argument(std::string(repack ? kRepackAlgorithm : kBoundAlgorithm) +
                                " is for FIFO admission only");
  PackingOracle oracle(tree, o.tree.rails, repack ? LpSolver{} : glpsol_solver(o.bound.seconds));
  return fifo_bound(tree, o.tree.rails, w, oracle);
}

// What every JSON answer of a run names: the tree, the algorithm, the rails, the workload.
void describe_run(nlohmann::json& j, const topology::FatTree& tree, const RunOptions& o) {
  j["topology"] = tree.spec().text();
  j["algorithm"] = o.algorithm;
  j["rails"] = o.tree.rails;
  j["workload"] = o.workload;
}

// A repacking algorithm (the bound, laas-repack): FIFO with the placement re-made at will.
void run_repacking(const topology::FatTree& tree, const RunOptions& o, const Workload& w) {
  const bool repack = o.algorithm == kRepackAlgorithm;
  auto b = compute_bound(tree, o, w, repack);
  if (o.json) {
    auto j = bound_json(b);
    describe_run(j, tree, o);
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::printf("%s: %s, %s\n", o.workload.c_str(), tree.spec().text().c_str(),
              repack ? "laas-repack (FIFO, the allocator re-placing every running tenant; "
                       "at most the bound)"
                     : "bound (FIFO with free repacking)");
  std::printf("  host utilization %6.2f %% (window, indicative), whole run %6.2f %%%s\n",
              b.window.hosts * 100, b.whole.hosts * 100, repack ? "" : " (a bound)");
  std::printf("  placed %d, rejected %d; packings asked %ld: %ld remembered, %ld too large, %s\n",
              b.placed, b.rejected, b.oracle.asked, b.oracle.remembered, b.oracle.too_large,
              packings_answered(o.algorithm, b.oracle).c_str());
  std::printf("  wall %.3f s\n", b.wall_s);
}

SimResult run_simulation(const topology::FatTree& tree, const RunOptions& o,
                         allocator::Placer& placer, const Workload& w) {
  const int rails = o.tree.rails;
  SimOptions so;
  so.policy = o.policy;
  so.policy_options.backfill_depth = o.depth;
  so.policy_options.skip_larger_after_failure = !o.exhaustive;
  so.check.every = o.check ? std::max(1, o.check_every) : 0;
  if (rails > 1)
    so.check.leaf_rail = topology::rail_of_leaf(tree, topology::rail_servers(tree, rails));
  std::ofstream log;
  TransactionSink sink;
  if (!o.log_path.empty()) {
    log = open_out(o.log_path);
    write_log_header(log, tree, o.algorithm, placer.isolates(), rails);
    sink = log_sink(log);
  }
  return simulate(tree, placer, w, so, sink);
}

// --csv, --timeline and --summary.
void write_run_files(const topology::FatTree& tree, const RunOptions& o, const Workload& w,
                     const SimResult& r) {
  if (!o.csv_path.empty()) {
    auto f = open_out(o.csv_path);
    write_tenant_csv(f, w, r);
  }
  if (!o.timeline_path.empty()) {
    auto f = open_out(o.timeline_path);
    f << "t,hosts_requested,hosts_held,l1_links,l2_links\n";
    for (auto& s : r.timeline) {
      f << format_time(s.t) << ',' << s.hosts_requested << ',' << s.hosts_held << ',' << s.l1_links
        << ',' << s.l2_links << '\n';
    }
  }
  if (!o.summary_path.empty()) append_summary(o, tree, w.size(), r);
}

// The run's figures (JSON or text), with --against-bound the bound's; a run that beats the
// bound fails.
void report_run(const topology::FatTree& tree, const RunOptions& o, const Workload& w,
                const SimResult& r, int skipped) {
  std::vector<std::string> beaten;
  nlohmann::json bound;
  if (o.against_bound) {
    auto b = compute_bound(tree, o, w);
    std::vector<double> starts;
    for (auto& t : r.tenants) starts.push_back(t.start);
    beaten = check_against_bound(b, starts, r.whole.hosts);
    bound = bound_json(b);
  }
  if (o.json) {
    auto j = to_json(r);
    describe_run(j, tree, o);
    j["policy"] = o.policy;
    j["tenants"] = w.size();
    if (skipped) j["swf_skipped"] = skipped;
    if (o.against_bound) j["bound"] = bound;
    std::cout << j.dump(2) << "\n";
  } else {
    print_text(o.workload + ": " + tree.spec().text() + ", " + o.algorithm + ", " + o.policy, r);
    if (o.against_bound)
      std::printf("  bound: host %.2f %% (window), whole run %.2f %%\n",
                  bound["host_utilization"].get<double>() * 100,
                  bound["whole_host_utilization"].get<double>() * 100);
  }
  if (!beaten.empty()) {
    // Only an allocator that breaks the placement rules can beat the bound.
    throw CheckFailure(
        o.algorithm + " beats the bound: " + beaten[0] +
        (beaten.size() > 1 ? " (and " + std::to_string(beaten.size() - 1) + " more)" : ""));
  }
}

int cmd_run(const RunOptions& o) {
  if (o.workload.empty()) throw std::invalid_argument("--workload FILE is required");
  auto tree = topology::FatTree::parse(o.tree.topology);
  const int rails = o.tree.rails;
  // Names first, then files: an unknown algorithm is a usage error whatever the workload.
  std::unique_ptr<allocator::Placer> placer;
  if (!is_repacking(o.algorithm))
    placer = rails > 1 ? allocator::make_server_placer(o.algorithm,
                                                       topology::rail_servers(tree, rails).ports)
                       : allocator::make_placer(o.algorithm, o.management_way, o.whole_leaves);
  if (o.whole_leaves && (rails > 1 || is_repacking(o.algorithm)))
    throw std::invalid_argument(
        "--whole-leaves: only with laas, simple or unconstrained and one rail");
  make_policy(o.policy);
  int skipped = 0;
  Workload w = load_workload(o.workload, &skipped);
  // Sizes count servers; every host figure of the run counts ports.
  for (auto& r : w) r.size *= rails;
  if (is_repacking(o.algorithm)) {
    run_repacking(tree, o, w);
    return 0;
  }
  const SimResult r = run_simulation(tree, o, *placer, w);
  write_run_files(tree, o, w, r);
  report_run(tree, o, w, r, skipped);
  return 0;
}

// ---- gen --------------------------------------------------------------------------------

struct GenOptions {
  TreeOptions tree;
  std::string dist = "exp", pdf_path, swf_path, out_path = "-", runtime = "20:3000";
  double mean = 8, stddev = -1, interarrival = 0;
  int tenants = 10000, max_size = 0;
  std::uint64_t seed = 1;
  bool zero_arrival = false;
};

void add_gen_options(CLI::App* gen, GenOptions& o) {
  gen->add_option("--dist", o.dist, "exp | exp-release | gauss | uniform | pdf | fixed | swf")
      ->capture_default_str();
  gen->add_option("--mean,-x", o.mean, "distribution parameter x")->capture_default_str();
  gen->add_option("--stddev,--alpha", o.stddev, "Gaussian standard deviation (default x/5)");
  gen->add_option("--pdf", o.pdf_path, "size PDF file (lines 'size weight') for --dist pdf");
  gen->add_option("--swf", o.swf_path, "SWF trace (.swf or .swf.gz) for --dist swf");
  gen->add_option("-n,--tenants", o.tenants, "number of tenants (swf: at most; 0 = all)")
      ->capture_default_str();
  gen->add_option("-r,--runtime", o.runtime, "uniform runtime MIN:MAX")->capture_default_str();
  gen->add_option("--interarrival", o.interarrival, "mean Poisson inter-arrival (0: all at 0)")
      ->capture_default_str();
  gen->add_option("--max-size", o.max_size,
                  "truncate sizes at this (default: the topology's hosts)");
  add_topology(gen, o.tree, "tree whose size truncates tenant sizes");
  gen->add_option("--seed", o.seed, "random seed")->capture_default_str();
  gen->add_flag("--zero-arrival", o.zero_arrival,
                "set every arrival to 0 (a saturated queue, as in the paper's study)");
  gen->add_option("-o,--output", o.out_path, "output file ('-' for stdout)")->capture_default_str();
}

int cmd_gen(const GenOptions& o) {
  auto tree = topology::FatTree::parse(o.tree.topology);
  Workload w;
  if (o.dist == "swf") {
    if (o.swf_path.empty()) throw std::invalid_argument("--dist swf needs --swf FILE");
    int skipped = 0;
    std::istringstream in(read_text_file(o.swf_path));
    w = read_swf(in, o.swf_path, &skipped);
    if (o.tenants > 0 && static_cast<int>(w.size()) > o.tenants) w.resize(o.tenants);
    std::fprintf(stderr, "%s: %zu jobs, %d records skipped (size or runtime <= 0)\n",
                 o.swf_path.c_str(), w.size(), skipped);
  } else {
    GenSpec g;
    g.size.kind = parse_size_kind(o.dist);
    g.size.mean = o.mean;
    g.size.stddev = o.stddev;
    g.size.max_size = o.max_size > 0 ? o.max_size : tree.num_hosts();
    if (g.size.kind == SizeKind::kPdf) {
      if (o.pdf_path.empty()) throw std::invalid_argument("--dist pdf needs --pdf FILE");
      g.size.pdf = load_size_pdf(o.pdf_path);
    }
    g.tenants = o.tenants;
    parse_range(o.runtime, &g.runtime_min, &g.runtime_max);
    g.mean_interarrival = o.interarrival;
    g.seed = o.seed;
    w = generate(g);
  }
  if (o.zero_arrival) {
    for (auto& r : w) r.arrival = 0;
  }
  if (o.out_path == "-") {
    write_csv(std::cout, w);
  } else {
    auto f = open_out(o.out_path);
    write_csv(f, w);
  }
  return 0;
}

// ---- sweep ------------------------------------------------------------------------------

struct SweepOptions {
  TreeOptions tree;
  BoundOptions bound;
  SweepSpec spec;
  std::string dists = "exp,gauss,uniform", means = "4,8,16,32,64,128,256,512",
              algs = "laas,simple,unconstrained", pols = "fifo", out_dir = ".", runtime = "20:3000";
  bool plot = false, plot_only = false;
};

void add_sweep_options(CLI::App* sw, SweepOptions& o) {
  add_topology(sw, o.tree);
  add_rails(sw, o.tree);
  add_bound(sw, o.bound);
  sw->add_option("--dists", o.dists)->capture_default_str();
  sw->add_option("--means", o.means)->capture_default_str();
  sw->add_option("--algorithms", o.algs,
                 "laas, simple, unconstrained, bound (small trees only) and laas-repack "
                 "(FIFO, the allocator re-placing every running tenant at each event)")
      ->capture_default_str();
  sw->add_option("--policies", o.pols)->capture_default_str();
  sw->add_option("--seeds", o.spec.seeds, "seeds 1..N per point")->capture_default_str();
  sw->add_option("-n,--tenants", o.spec.tenants)->capture_default_str();
  sw->add_option("-r,--runtime", o.runtime)->capture_default_str();
  sw->add_option("--backfill-depth", o.spec.backfill_depth)->capture_default_str();
  sw->add_option("-j,--jobs", o.spec.jobs, "threads")->capture_default_str();
  sw->add_option("--out", o.out_dir, "directory for sweep-runs.csv, sweep-summary.csv, *.png")
      ->capture_default_str();
  sw->add_flag("--plot", o.plot, "draw PNGs with gnuplot");
  sw->add_flag("--plot-only", o.plot_only,
               "no runs: redraw the PNGs from the CSVs already in --out");
}

void draw_sweep(const SweepOptions& o, const std::string& runs_csv, const std::string& sum_csv) {
  std::vector<std::string> series;
  for (auto& a : o.spec.algorithms) {
    if (a == kBoundAlgorithm || a == kRepackAlgorithm) {
      series.push_back(a + "/fifo");
      continue;
    }
    for (auto& p : o.spec.policies) series.push_back(a + "/" + p);
  }
  std::string err;
  for (auto& d : o.spec.dists) {
    std::string png = o.out_dir + "/util-" + d + ".png";
    if (!run_gnuplot(sweep_plot_script(sum_csv, d, series, png), &err)) {
      throw std::runtime_error(err);
    }
    std::printf("wrote %s\n", png.c_str());
  }
  std::string png = o.out_dir + "/links-off.png";
  if (!run_gnuplot(links_off_plot_script(runs_csv, png), &err)) throw std::runtime_error(err);
  std::printf("wrote %s\n", png.c_str());
}

// A sweep row's progress-line tail: how its packing questions were answered.
std::string packings_line(const SweepRow& r) {
  return is_repacking(r.algorithm) ? "  packings: " + packings_answered(r.algorithm, r.oracle) : "";
}

int cmd_sweep(SweepOptions& o) {
  SweepSpec& spec = o.spec;
  spec.topology = o.tree.topology;
  spec.rails = o.tree.rails;
  spec.dists = split(o.dists);
  spec.means = parse_means(o.means);
  spec.algorithms = split(o.algs);
  spec.policies = split(o.pols);
  parse_range(o.runtime, &spec.runtime_min, &spec.runtime_max);
  for (auto& p : spec.policies) make_policy(p);
  if (std::count(spec.algorithms.begin(), spec.algorithms.end(), "bound"))
    spec.solver = glpsol_solver(o.bound.seconds);
  std::filesystem::create_directories(o.out_dir);
  std::string runs_csv = o.out_dir + "/sweep-runs.csv", sum_csv = o.out_dir + "/sweep-summary.csv";
  if (!o.plot_only) {
    auto rows = run_sweep(spec, [](const SweepRow& r) {
      std::fprintf(stderr,
                   "%-8s x=%-6g seed=%-2llu %-13s %-8s host %.2f%%  whole %.2f%%  %.2fs%s\n",
                   r.dist.c_str(), r.mean, static_cast<unsigned long long>(r.seed),
                   r.algorithm.c_str(), r.policy.c_str(), r.result.window.hosts * 100,
                   r.result.whole.hosts * 100, r.result.wall_s, packings_line(r).c_str());
    });
    {
      auto f = open_out(runs_csv);
      write_sweep_runs_csv(f, rows);
    }
    {
      auto f = open_out(sum_csv);
      write_sweep_summary_csv(f, rows);
    }
    std::printf("wrote %s and %s\n", runs_csv.c_str(), sum_csv.c_str());
  }
  if (o.plot || o.plot_only) draw_sweep(o, runs_csv, sum_csv);
  return 0;
}

// ---- audit ------------------------------------------------------------------------------

struct AuditOptions {
  std::string topology;  // empty: the one the log's header names
  std::string log_path;
  int every = 1;
};

void add_audit_options(CLI::App* au, AuditOptions& o) {
  au->add_option("--topology", o.topology,
                 "fat-tree spec the log was written for (default: the one its header names)");
  au->add_option("--log", o.log_path, "log written by --log")->required();
  au->add_option("--check-every", o.every, "full check every N transactions")
      ->capture_default_str();
}

int cmd_audit(const AuditOptions& o) {
  const std::string text = read_text_file(o.log_path);
  std::istringstream header(text);
  const std::string logged = logged_topology(header);
  std::string spec = o.topology.empty() ? logged : o.topology;
  if (spec.empty()) {
    std::fprintf(stderr, "%s: the log names no topology in its header; give --topology\n",
                 o.log_path.c_str());
    return 2;
  }
  auto tree = topology::FatTree::parse(spec);
  if (!logged.empty() && topology::FatTree::parse(logged).spec().text() != tree.spec().text()) {
    std::fprintf(stderr, "%s: the log was written for %s, not --topology %s\n", o.log_path.c_str(),
                 logged.c_str(), o.topology.c_str());
    return 2;
  }
  std::istringstream in(text);
  auto rep = audit_log(tree, in, o.log_path, o.every);
  std::printf("audited %ld ADD and %ld REM; added %ld L1 and %ld L2 up-links\n", rep.adds,
              rep.removes, rep.l1_added, rep.l2_added);
  for (auto& p : rep.problems) std::fprintf(stderr, "%s\n", p.c_str());
  if (!rep.problems.empty()) {
    std::fprintf(stderr, "audit FAILED\n");
    return 1;
  }
  std::printf("audit ok: every transaction legal\n");
  return 0;
}

// Exit statuses: 65 bad input file, 3 a check failed, 2 usage, 1 anything else.
template <typename F>
int guarded(F&& f) {
  try {
    return f();
  } catch (const InputError& e) {
    std::fprintf(stderr, "laas-sim: error: %s\n", e.what());
    return 65;
  } catch (const CheckFailure& e) {
    std::fprintf(stderr, "laas-sim: CHECK FAILED: %s\n", e.what());
    return 3;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "laas-sim: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "laas-sim: error: %s\n", e.what());
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"laas-sim: cloud-utilization simulator for Links as a Service"};
  app.require_subcommand(0, 1);
  RunOptions run;
  add_run_options(app, run);
  GenOptions gen;
  auto* gen_cmd = app.add_subcommand("gen", "generate a workload CSV (seeded, reproducible)");
  add_gen_options(gen_cmd, gen);
  SweepOptions sweep;
  auto* sweep_cmd =
      app.add_subcommand("sweep", "utilization versus average tenant size: CSV + PNG");
  add_sweep_options(sweep_cmd, sweep);
  AuditOptions audit;
  auto* audit_cmd =
      app.add_subcommand("audit", "replay a --log file through the independent checker");
  add_audit_options(audit_cmd, audit);

  if (const int rc = laas::util::parse_command_line(app, argc, argv); rc >= 0) return rc;

  return guarded([&] {
    if (*gen_cmd) return cmd_gen(gen);
    if (*sweep_cmd) return cmd_sweep(sweep);
    if (*audit_cmd) return cmd_audit(audit);
    return cmd_run(run);
  });
}

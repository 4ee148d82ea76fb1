// laas-sim: scheduling simulator over the LaaS allocator (see docs/simulation.md).
//   laas-sim --topology T --workload FILE --algorithm laas|simple|unconstrained
//            --policy fifo|backfill [--seed S] [--json] [--log FILE] [--csv FILE] [--check]
//   laas-sim gen   ...   workload generator
//   laas-sim sweep ...   utilization versus tenant size, CSV + PNG
//   laas-sim audit ...   replay a --log file through the independent checker
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "allocator/placer.h"
#include "sim/audit.h"
#include "sim/generator.h"
#include "sim/io.h"
#include "sim/simulator.h"
#include "sim/sweep.h"
#include "topology/servers.h"
#include "util/cli_parse.h"

using namespace laas;
using namespace laas::sim;

namespace {

std::vector<double> parse_means(const std::string& text) {
  std::vector<double> v;
  std::stringstream ss(text);
  std::string f;
  while (std::getline(ss, f, ',')) {
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
      u2 = 0;
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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"laas-sim: cloud-utilization simulator for Links as a Service"};
  app.require_subcommand(0, 1);

  // Run (no subcommand).
  std::string topo = "xgft(3;18,18,36;1,18,18)", workload, algorithm = "laas", policy = "fifo";
  std::string log_path, csv_path, timeline_path;
  std::uint64_t seed = 0;
  bool json = false, check = false;
  int check_every = 1, depth = 200;
  app.add_option("--topology", topo, "fat-tree spec, xgft(...) or pgft(...)")
      ->capture_default_str();
  app.add_option("--workload", workload, "workload: CSV id,size,arrival,runtime or *.swf[.gz]");
  app.add_option("--algorithm", algorithm, "laas | simple | unconstrained")->capture_default_str();
  app.add_option("--policy", policy, "fifo | backfill")->capture_default_str();
  app.add_option("--seed", seed, "accepted for symmetry with gen; runs are deterministic");
  app.add_flag("--json", json, "print one JSON object");
  app.add_option("--log", log_path, "write every ADD/REM with hosts and links");
  app.add_option("--csv", csv_path, "write one line per tenant");
  app.add_option("--timeline", timeline_path, "write the occupancy at every event time");
  std::string summary_path, label;
  app.add_option("--summary", summary_path,
                 "append one CSV line of figures to this file (header if new)");
  app.add_option("--label", label, "first column of the --summary line");
  app.add_flag("--check", check, "re-verify with the independent checker (see --check-every)");
  app.add_option("--check-every", check_every,
                 "1: full check after every ADD/REM; N: shape-check each placement, full check "
                 "every N transactions")
      ->capture_default_str();
  app.add_option("--backfill-depth", depth, "tenants examined behind the head per pass")
      ->capture_default_str();
  int rails = 1;
  app.add_option("--rails", rails,
                 "rail-optimized tree: servers with R ports, one on each of R rail "
                 "leaves (leaf i is rail i mod R of group i / R, as laas-topogen --rails); a "
                 "tenant of size N takes N whole servers (N x R ports); laas or unconstrained")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  bool exhaustive = false;
  app.add_flag("--backfill-exhaustive", exhaustive,
               "search every candidate, not only sizes below the smallest that failed");

  // gen
  auto* gen = app.add_subcommand("gen", "generate a workload CSV (seeded, reproducible)");
  std::string dist = "exp", pdf_path, swf_path, out_path = "-", runtime = "20:3000";
  double mean = 8, stddev = -1, interarrival = 0;
  int tenants = 10000, max_size = 0;
  std::uint64_t gseed = 1;
  gen->add_option("--dist", dist, "exp | exp-release | gauss | uniform | pdf | fixed | swf")
      ->capture_default_str();
  gen->add_option("--mean,-x", mean, "distribution parameter x")->capture_default_str();
  gen->add_option("--stddev,--alpha", stddev, "Gaussian standard deviation (default x/5)");
  gen->add_option("--pdf", pdf_path, "size PDF file (lines 'size weight') for --dist pdf");
  gen->add_option("--swf", swf_path, "SWF trace (.swf or .swf.gz) for --dist swf");
  gen->add_option("-n,--tenants", tenants, "number of tenants (swf: at most; 0 = all)")
      ->capture_default_str();
  gen->add_option("-r,--runtime", runtime, "uniform runtime MIN:MAX")->capture_default_str();
  gen->add_option("--interarrival", interarrival, "mean Poisson inter-arrival (0: all at 0)")
      ->capture_default_str();
  gen->add_option("--max-size", max_size, "truncate sizes at this (default: the topology's hosts)");
  gen->add_option("--topology", topo, "tree whose size truncates tenant sizes");
  gen->add_option("--seed", gseed, "random seed")->capture_default_str();
  bool zero_arrival = false;
  gen->add_flag("--zero-arrival", zero_arrival,
                "set every arrival to 0 (a saturated queue, as in the paper's study)");
  gen->add_option("-o,--output", out_path, "output file ('-' for stdout)")->capture_default_str();

  // sweep
  auto* sw = app.add_subcommand("sweep", "utilization versus average tenant size: CSV + PNG");
  SweepSpec spec;
  std::string dists = "exp,gauss,uniform", means = "4,8,16,32,64,128,256,512",
              algs = "laas,simple,unconstrained", pols = "fifo", out_dir = ".";
  bool plot = false;
  sw->add_option("--topology", spec.topology)->capture_default_str();
  sw->add_option("--dists", dists)->capture_default_str();
  sw->add_option("--means", means)->capture_default_str();
  sw->add_option("--algorithms", algs)->capture_default_str();
  sw->add_option("--policies", pols)->capture_default_str();
  sw->add_option("--seeds", spec.seeds, "seeds 1..N per point")->capture_default_str();
  sw->add_option("-n,--tenants", spec.tenants)->capture_default_str();
  sw->add_option("-r,--runtime", runtime)->capture_default_str();
  sw->add_option("--backfill-depth", spec.backfill_depth)->capture_default_str();
  sw->add_option("-j,--jobs", spec.jobs, "threads")->capture_default_str();
  sw->add_option("--out", out_dir, "directory for sweep-runs.csv, sweep-summary.csv, *.png")
      ->capture_default_str();
  sw->add_flag("--plot", plot, "draw PNGs with gnuplot");
  bool plot_only = false;
  sw->add_flag("--plot-only", plot_only, "no runs: redraw the PNGs from the CSVs already in --out");

  // audit
  auto* au = app.add_subcommand("audit", "replay a --log file through the independent checker");
  std::string audit_log_path;
  int audit_every = 1;
  au->add_option("--topology", topo)->capture_default_str();
  au->add_option("--log", audit_log_path, "log written by --log")->required();
  au->add_option("--check-every", audit_every, "full check every N transactions")
      ->capture_default_str();

  if (const int rc = laas::util::parse_command_line(app, argc, argv); rc >= 0) return rc;

  auto split = [](const std::string& s) {
    std::vector<std::string> v;
    std::stringstream ss(s);
    std::string f;
    while (std::getline(ss, f, ',')) {
      if (!f.empty()) v.push_back(f);
    }
    return v;
  };

  try {
    if (*gen) {
      auto tree = topology::FatTree::parse(topo);
      Workload w;
      if (dist == "swf") {
        if (swf_path.empty()) throw std::invalid_argument("--dist swf needs --swf FILE");
        int skipped = 0;
        std::istringstream in(read_text_file(swf_path));
        w = read_swf(in, swf_path, &skipped);
        if (tenants > 0 && static_cast<int>(w.size()) > tenants) w.resize(tenants);
        std::fprintf(stderr, "%s: %zu jobs, %d records skipped (size or runtime <= 0)\n",
                     swf_path.c_str(), w.size(), skipped);
      } else {
        GenSpec g;
        g.size.kind = parse_size_kind(dist);
        g.size.mean = mean;
        g.size.stddev = stddev;
        g.size.max_size = max_size > 0 ? max_size : tree.num_hosts();
        if (g.size.kind == SizeKind::kPdf) {
          if (pdf_path.empty()) throw std::invalid_argument("--dist pdf needs --pdf FILE");
          g.size.pdf = load_size_pdf(pdf_path);
        }
        g.tenants = tenants;
        parse_range(runtime, &g.runtime_min, &g.runtime_max);
        g.mean_interarrival = interarrival;
        g.seed = gseed;
        w = generate(g);
      }
      if (zero_arrival) {
        for (auto& r : w) r.arrival = 0;
      }
      if (out_path == "-") {
        write_csv(std::cout, w);
      } else {
        auto f = open_out(out_path);
        write_csv(f, w);
      }
      return 0;
    }

    if (*sw) {
      spec.dists = split(dists);
      spec.means = parse_means(means);
      spec.algorithms = split(algs);
      spec.policies = split(pols);
      parse_range(runtime, &spec.runtime_min, &spec.runtime_max);
      for (auto& p : spec.policies) make_policy(p);
      std::string runs_csv = out_dir + "/sweep-runs.csv", sum_csv = out_dir + "/sweep-summary.csv";
      if (plot_only) {
        plot = true;
      } else {
        auto rows = run_sweep(spec, [](const SweepRow& r) {
          std::fprintf(stderr, "%-8s x=%-6g seed=%-2llu %-13s %-8s host %.2f%%  %.2fs\n",
                       r.dist.c_str(), r.mean, static_cast<unsigned long long>(r.seed),
                       r.algorithm.c_str(), r.policy.c_str(), r.result.window.hosts * 100,
                       r.result.wall_s);
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
      if (plot) {
        std::vector<std::string> series;
        for (auto& a : spec.algorithms) {
          for (auto& p : spec.policies) series.push_back(a + "/" + p);
        }
        std::string err;
        for (auto& d : spec.dists) {
          std::string png = out_dir + "/util-" + d + ".png";
          if (!run_gnuplot(sweep_plot_script(sum_csv, d, series, png), &err)) {
            throw std::runtime_error(err);
          }
          std::printf("wrote %s\n", png.c_str());
        }
        std::string png = out_dir + "/links-off.png";
        if (!run_gnuplot(links_off_plot_script(runs_csv, png), &err)) throw std::runtime_error(err);
        std::printf("wrote %s\n", png.c_str());
      }
      return 0;
    }

    if (*au) {
      auto tree = topology::FatTree::parse(topo);
      std::istringstream in(read_text_file(audit_log_path));
      auto rep = audit_log(tree, in, audit_log_path, audit_every);
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

    // Run.
    if (workload.empty()) throw std::invalid_argument("--workload FILE is required");
    auto tree = topology::FatTree::parse(topo);
    auto placer = rails > 1 ? allocator::make_server_placer(
                                  algorithm, topology::rail_servers(tree, rails).ports)
                            : allocator::make_placer(algorithm);
    make_policy(policy);
    int skipped = 0;
    Workload w = load_workload(workload, &skipped);
    // Sizes count servers; every host figure of the run counts ports.
    for (auto& r : w) r.size *= rails;
    SimOptions o;
    o.policy = policy;
    o.policy_options.backfill_depth = depth;
    o.policy_options.skip_larger_after_failure = !exhaustive;
    o.check.every = check ? std::max(1, check_every) : 0;
    if (rails > 1)
      o.check.leaf_rail = topology::rail_of_leaf(tree, topology::rail_servers(tree, rails));
    std::ofstream log;
    TransactionSink sink;
    if (!log_path.empty()) {
      log = open_out(log_path);
      write_log_header(log, tree, algorithm, placer->isolates(), rails);
      sink = log_sink(log);
    }
    SimResult r = simulate(tree, *placer, w, o, sink);
    if (!csv_path.empty()) {
      auto f = open_out(csv_path);
      write_tenant_csv(f, w, r);
    }
    if (!timeline_path.empty()) {
      auto f = open_out(timeline_path);
      f << "t,hosts_requested,hosts_held,l1_links,l2_links\n";
      for (auto& s : r.timeline) {
        f << format_time(s.t) << ',' << s.hosts_requested << ',' << s.hosts_held << ','
          << s.l1_links << ',' << s.l2_links << '\n';
      }
    }
    if (!summary_path.empty()) {
      bool fresh = !std::ifstream(summary_path).good();
      std::ofstream f(summary_path, std::ios::app);
      if (!f) throw std::runtime_error(summary_path + ": cannot open for writing");
      if (fresh) {
        f << "label,workload,topology,algorithm,policy,tenants,host_util,held_host_util,l1_util,"
             "l2_util,links_off,whole_host_util,window_t0,window_t1,placed,rejected,"
             "placer_calls,alloc_us_p50,alloc_us_p99,alloc_us_max,wall_s,cpu_s,alloc_cpu_us_p50,"
             "alloc_cpu_us_p99,alloc_cpu_us_max\n";
      }
      char buf[512];
      std::snprintf(buf, sizeof buf,
                    "%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%s,%s,%d,%d,%ld,%.2f,%.2f,%.2f,%.3f",
                    r.window.hosts, r.window.hosts_held, r.window.l1, r.window.l2,
                    r.window.links_off, r.whole.hosts, format_time(r.window.t0).c_str(),
                    format_time(r.window.t1).c_str(), r.placed, r.rejected, r.search_us.count,
                    r.search_us.p50, r.search_us.p99, r.search_us.max, r.wall_s);
      char cpu[128];
      std::snprintf(cpu, sizeof cpu, ",%.3f,%.2f,%.2f,%.2f", r.cpu_s, r.search_cpu_us.p50,
                    r.search_cpu_us.p99, r.search_cpu_us.max);
      std::string topo_text = tree.spec().text();  // commas become spaces: CSV-safe
      std::replace(topo_text.begin(), topo_text.end(), ',', ' ');
      f << label << ',' << workload << ',' << topo_text << ',' << algorithm << ',' << policy << ','
        << w.size() << ',' << buf << cpu << '\n';
    }
    if (json) {
      auto j = to_json(r);
      j["topology"] = tree.spec().text();
      j["algorithm"] = algorithm;
      j["rails"] = rails;
      j["policy"] = policy;
      j["workload"] = workload;
      j["tenants"] = w.size();
      if (skipped) j["swf_skipped"] = skipped;
      std::cout << j.dump(2) << "\n";
    } else {
      print_text(workload + ": " + tree.spec().text() + ", " + algorithm + ", " + policy, r);
    }
    return 0;
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

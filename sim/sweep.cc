#include "sim/sweep.h"

#include <atomic>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <tuple>

#include "allocator/placer.h"
#include "topology/servers.h"
#include "util/threads.h"

namespace laas::sim {

namespace {

constexpr const char* kBound = kBoundAlgorithm;

std::unique_ptr<allocator::Placer> sweep_placer(const topology::FatTree& tree,
                                                const std::string& algorithm, int rails) {
  return rails > 1
             ? allocator::make_server_placer(algorithm, topology::rail_servers(tree, rails).ports)
             : allocator::make_placer(algorithm);
}

SimResult as_result(const BoundResult& b) {
  SimResult r;
  r.saturated = b.saturated;
  r.window = b.window;
  r.whole = b.whole;
  r.placed = b.placed;
  r.rejected = b.rejected;
  r.wall_s = b.wall_s;
  r.tenants.resize(b.start.size());
  for (size_t i = 0; i < b.start.size(); ++i) r.tenants[i].start = b.start[i];
  return r;
}

// Every isolating FIFO run against the bound of its workload.
void check_rows(const std::vector<SweepRow>& rows) {
  for (auto& b : rows) {
    if (b.algorithm != kBound) continue;
    BoundResult bound;
    bound.whole = b.result.whole;
    for (auto& t : b.result.tenants) bound.start.push_back(t.start);
    for (auto& r : rows) {
      if (r.algorithm == kBound || r.algorithm == "unconstrained" || r.policy != "fifo" ||
          r.dist != b.dist || r.mean != b.mean || r.seed != b.seed)
        continue;
      std::vector<double> starts;
      for (auto& t : r.result.tenants) starts.push_back(t.start);
      auto found = check_against_bound(bound, starts, r.result.whole.hosts);
      if (!found.empty())
        throw CheckFailure(
            r.algorithm + " on " + r.dist + " x=" + std::to_string(r.mean) + " seed " +
            std::to_string(r.seed) + " beats the bound: " + found[0] +
            (found.size() > 1 ? " (and " + std::to_string(found.size() - 1) + " more)" : ""));
    }
  }
}

}  // namespace

std::vector<SweepRow> run_sweep(const SweepSpec& spec,
                                const std::function<void(const SweepRow&)>& progress) {
  const auto tree = topology::FatTree::parse(spec.topology);
  const int servers = tree.num_hosts() / spec.rails;
  std::vector<SweepRow> rows;
  for (auto& d : spec.dists) {
    parse_size_kind(d);  // fail early on a bad name
    for (double mean : spec.means) {
      for (int s = 1; s <= spec.seeds; ++s) {
        for (auto& a : spec.algorithms) {
          if (a == kBound) {
            if (!spec.solver) throw std::invalid_argument("the bound needs a solver");
            packing_fabric(tree, spec.rails);  // fail early on a bad rail count
          } else if (a == kRepackAlgorithm) {
            packing_fabric(tree, spec.rails);
          } else {
            sweep_placer(tree, a, spec.rails);
          }
          for (auto& p : spec.policies) {
            if (is_repacking(a) && p != spec.policies.front()) continue;
            SweepRow r;
            r.dist = d;
            r.mean = mean;
            r.seed = static_cast<std::uint64_t>(s);
            r.algorithm = a;
            r.policy = is_repacking(a) ? "fifo" : p;
            rows.push_back(r);
          }
        }
      }
    }
  }
  std::atomic<size_t> next{0};
  std::mutex mu;
  std::exception_ptr error;
  auto worker = [&] {
    for (;;) {
      size_t i = next++;
      if (i >= rows.size()) return;
      try {
        SweepRow& r = rows[i];
        GenSpec g;
        g.size.kind = parse_size_kind(r.dist);
        g.size.mean = r.mean;
        g.size.max_size = servers;
        g.tenants = spec.tenants;
        g.runtime_min = spec.runtime_min;
        g.runtime_max = spec.runtime_max;
        g.seed = r.seed;
        Workload w = generate(g);
        double sum = 0;
        for (auto& q : w) sum += q.size;
        r.avg_size = w.empty() ? 0 : sum / static_cast<double>(w.size());
        // Sizes count servers; every host figure of the run counts ports.
        for (auto& q : w) q.size *= spec.rails;
        if (is_repacking(r.algorithm)) {
          PackingOracle oracle(tree, spec.rails, r.algorithm == kBound ? spec.solver : LpSolver{});
          r.result = as_result(fifo_bound(tree, spec.rails, w, oracle));
          r.oracle = oracle.counts();
        } else {
          auto placer = sweep_placer(tree, r.algorithm, spec.rails);
          SimOptions o;
          o.policy = r.policy;
          o.policy_options.backfill_depth = spec.backfill_depth;
          o.keep_timeline = false;
          r.result = simulate(tree, *placer, w, o);
        }
        if (progress) {
          std::lock_guard<std::mutex> lock(mu);
          progress(r);
        }
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
        next = rows.size();
        return;
      }
    }
  };
  util::run_on_threads(spec.jobs, worker);
  if (error) std::rethrow_exception(error);
  check_rows(rows);
  return rows;
}

void write_sweep_runs_csv(std::ostream& out, const std::vector<SweepRow>& rows) {
  out << "dist,mean,seed,algorithm,policy,avg_size,host_util,held_host_util,l1_util,l2_util,"
         "links_off,whole_host_util,placed,rejected,alloc_us_p50,alloc_us_p99,alloc_us_max,"
         "wall_s,packings_solved,packings_unsolved\n";
  for (auto& r : rows) {
    const auto& s = r.result;
    out << r.dist << ',' << r.mean << ',' << r.seed << ',' << r.algorithm << ',' << r.policy << ','
        << r.avg_size << ',' << s.window.hosts << ',' << s.window.hosts_held << ',' << s.window.l1
        << ',' << s.window.l2 << ',' << s.window.links_off << ',' << s.whole.hosts << ','
        << s.placed << ',' << s.rejected << ',' << s.search_us.p50 << ',' << s.search_us.p99 << ','
        << s.search_us.max << ',' << s.wall_s << ',' << r.oracle.solved << ',' << r.oracle.unknown
        << '\n';
  }
}

void write_sweep_summary_csv(std::ostream& out, const std::vector<SweepRow>& rows) {
  struct Acc {
    int n = 0;
    double size = 0, u = 0, u2 = 0, held = 0, l1 = 0, l2 = 0, off = 0, p99 = 0, max = 0, whole = 0;
  };
  std::map<std::tuple<std::string, double, std::string, std::string>, Acc> acc;
  std::vector<std::tuple<std::string, double, std::string, std::string>> order;
  for (auto& r : rows) {
    auto key = std::make_tuple(r.dist, r.mean, r.algorithm, r.policy);
    auto [it, fresh] = acc.try_emplace(key);
    if (fresh) order.push_back(key);
    Acc& a = it->second;
    const auto& w = r.result.window;
    a.n++;
    a.size += r.avg_size;
    a.u += w.hosts;
    a.u2 += w.hosts * w.hosts;
    a.held += w.hosts_held;
    a.l1 += w.l1;
    a.l2 += w.l2;
    a.off += w.links_off;
    a.whole += r.result.whole.hosts;
    a.p99 = std::max(a.p99, r.result.search_us.p99);
    a.max = std::max(a.max, r.result.search_us.max);
  }
  out << "dist,mean,algorithm,policy,runs,avg_size,host_util,host_util_sd,held_host_util,"
         "l1_util,l2_util,links_off,alloc_us_p99_max,alloc_us_max,whole_host_util\n";
  for (auto& key : order) {
    const Acc& a = acc[key];
    double n = a.n;
    double mu = a.u / n;
    double var = std::max(0.0, a.u2 / n - mu * mu);
    out << std::get<0>(key) << ',' << std::get<1>(key) << ',' << std::get<2>(key) << ','
        << std::get<3>(key) << ',' << a.n << ',' << a.size / n << ',' << mu << ',' << std::sqrt(var)
        << ',' << a.held / n << ',' << a.l1 / n << ',' << a.l2 / n << ',' << a.off / n << ','
        << a.p99 << ',' << a.max << ',' << a.whole / n << '\n';
  }
}

std::string sweep_plot_script(const std::string& summary_csv, const std::string& dist,
                              const std::vector<std::string>& series, const std::string& png_path) {
  static const std::map<std::string, std::string> titles{
      {"exp", "truncated exponential sizes"},
      {"exp-release", "exponential sizes (release generator)"},
      {"gauss", "truncated Gaussian sizes N(x, x/5)"},
      {"uniform", "uniform sizes [0.2x, 1.8x]"}};
  auto t = titles.count(dist) ? titles.at(dist) : dist;
  std::ostringstream s;
  s << "set terminal pngcairo size 900,560 noenhanced\n"
    << "set output '" << png_path << "'\n"
    << "set datafile separator ','\n"
    << "set title 'Cloud utilization, " << t << ", 10,000 tenants, FIFO unless noted'\n"
    << "set xlabel 'average tenant size (hosts)'\nset ylabel 'host utilization (%)'\n"
    << "set logscale x 2\nset grid\nset key below\nset yrange [*:100.5]\n"
    << "plot ";
  for (size_t i = 0; i < series.size(); ++i) {
    // series entries are "algorithm/policy"
    auto slash = series[i].find('/');
    std::string alg = series[i].substr(0, slash), pol = series[i].substr(slash + 1);
    if (i) s << ", ";
    s << "'" << summary_csv << "' using (strcol(1) eq '" << dist << "' && strcol(3) eq '" << alg
      << "' && strcol(4) eq '" << pol << "' ? $6 : 1/0):($7*100):($8*100) with yerrorlines"
      << " title '" << alg << (pol == "fifo" ? "" : " + " + pol) << "'";
  }
  s << "\n";
  return s.str();
}

std::string links_off_plot_script(const std::string& runs_csv, const std::string& png_path) {
  std::ostringstream s;
  s << "set terminal pngcairo size 900,560 noenhanced\n"
    << "set output '" << png_path << "'\n"
    << "set datafile separator ','\n"
    << "set title 'Up-links no tenant holds (could be powered off), LaaS runs of the sweep'\n"
    << "set xlabel 'host utilization (%)'\nset ylabel 'links off (%)'\nset grid\n"
    << "set key top right box opaque\nset xrange [*:100]\n"
    << "plot '" << runs_csv << "' using (strcol(4) eq 'laas' ? $7*100 : 1/0):($11*100) "
    << "with points pt 7 ps 0.6 title 'LaaS', "
    << "'" << runs_csv << "' using (strcol(4) eq 'simple' ? $7*100 : 1/0):($11*100) "
    << "with points pt 5 ps 0.6 title 'Simple'\n";
  return s.str();
}

}  // namespace laas::sim

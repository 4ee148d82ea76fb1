#include "sim/io.h"

#ifdef LAAS_HAVE_ZLIB
#include <zlib.h>
#endif

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace laas::sim {

#ifdef LAAS_HAVE_ZLIB
std::string read_text_file(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");  // reads plain files unchanged
  if (!f) throw std::runtime_error(path + ": cannot open");
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  bool bad = n < 0;
  gzclose(f);
  if (bad) throw std::runtime_error(path + ": read error (corrupt gzip?)");
  return out;
}
#else
// Without zlib (zlib1g-dev), gzip files go through the gzip program.
std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (out.size() < 2 || static_cast<unsigned char>(out[0]) != 0x1f ||
      static_cast<unsigned char>(out[1]) != 0x8b) {
    return out;
  }
  std::string quoted = "'";
  for (char c : path) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += "'";
  FILE* p = popen(("gzip -dc -- " + quoted).c_str(), "r");
  if (!p) throw std::runtime_error(path + ": cannot run gzip");
  out.clear();
  char buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  if (pclose(p) != 0) throw std::runtime_error(path + ": gzip -dc failed (corrupt gzip?)");
  return out;
}
#endif

static bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Workload load_workload(const std::string& path, int* swf_skipped) {
  std::istringstream in(read_text_file(path));
  if (ends_with(path, ".swf") || ends_with(path, ".swf.gz")) return read_swf(in, path, swf_skipped);
  return read_csv(in, path);
}

std::vector<std::pair<int, double>> load_size_pdf(const std::string& path) {
  std::istringstream in(read_text_file(path));
  return read_size_pdf(in, path);
}

void write_log_header(std::ostream& out, const FatTree& tree, const std::string& algorithm,
                      bool isolating, int rails) {
  out << "# laas-sim log topology=" << tree.spec().text() << " algorithm=" << algorithm
      << " isolated=" << (isolating ? 1 : 0);
  if (rails > 1) out << " rails=" << rails;
  out << "\n"
      << "# ADD|REM time id requested hosts N h... links M l...\n";
}

TransactionSink log_sink(std::ostream& out) {
  return [&out](const Transaction& t) {
    out << (t.add ? "ADD " : "REM ") << format_time(t.time) << ' ' << t.id << ' ' << t.requested
        << " hosts " << t.placement->hosts.size();
    for (auto h : t.placement->hosts) out << ' ' << h;
    out << " links " << t.placement->links.size();
    for (auto l : t.placement->links) out << ' ' << l;
    out << '\n';
  };
}

void write_tenant_csv(std::ostream& out, const Workload& w, const SimResult& r) {
  out << "id,size,arrival,runtime,start,end,wait,hosts_held,l1_links,l2_links,status\n";
  for (size_t i = 0; i < w.size(); ++i) {
    const auto& q = w[i];
    const auto& t = r.tenants[i];
    out << q.id << ',' << q.size << ',' << format_time(q.arrival) << ',' << format_time(q.runtime)
        << ',';
    if (t.start >= 0) {
      out << format_time(t.start) << ',' << format_time(t.end) << ','
          << format_time(t.start - q.arrival) << ',' << t.hosts_held << ',' << t.l1_links << ','
          << t.l2_links << ",placed\n";
    } else {
      out << ",,,,,," << (t.rejected ? "rejected" : "unplaced") << '\n';
    }
  }
}

static nlohmann::json util_json(const Utilization& u) {
  return {{"t0", u.t0},
          {"t1", u.t1},
          {"host_utilization", u.hosts},
          {"held_host_utilization", u.hosts_held},
          {"l1_link_utilization", u.l1},
          {"l2_link_utilization", u.l2},
          {"link_utilization", u.links},
          {"links_off_fraction", u.links_off}};
}

nlohmann::json to_json(const SimResult& r) {
  // The headline figures are the window's (the paper's measure), also given under "window".
  nlohmann::json j = util_json(r.window);
  j.erase("t0");
  j.erase("t1");
  j["stranded_host_fraction"] = r.window.stranded;
  j["saturated"] = r.saturated;
  j["window"] = util_json(r.window);
  j["whole_run"] = util_json(r.whole);
  j["placed"] = r.placed;
  j["rejected"] = r.rejected;
  j["placer_calls"] = r.search_us.count;
  j["alloc_us_p50"] = r.search_us.p50;
  j["alloc_us_p99"] = r.search_us.p99;
  j["alloc_us_max"] = r.search_us.max;
  j["alloc_us_mean"] = r.search_us.mean;
  j["alloc_cpu_us_p50"] = r.search_cpu_us.p50;
  j["alloc_cpu_us_p99"] = r.search_cpu_us.p99;
  j["alloc_cpu_us_max"] = r.search_cpu_us.max;
  j["cpu_s"] = r.cpu_s;
  j["checks_run"] = r.checks_run;
  j["budget_cuts"] = r.budget_cuts;
  j["wall_s"] = r.wall_s;
  return j;
}

bool run_gnuplot(const std::string& script, std::string* err) {
  FILE* p = popen("gnuplot 2>&1", "w");
  if (!p) {
    if (err) *err = "cannot start gnuplot";
    return false;
  }
  fwrite(script.data(), 1, script.size(), p);
  int rc = pclose(p);
  if (rc != 0) {
    if (err)
      *err = "gnuplot failed (exit status " + std::to_string(rc) + "); is gnuplot-nox installed?";
    return false;
  }
  return true;
}

LpSolver glpsol_solver(double seconds) {
  return [seconds](const std::string& lp) {
    const char* dir = std::getenv("TMPDIR");
    std::string path = std::string(dir && *dir ? dir : "/tmp") + "/laas-bound-XXXXXX";
    std::vector<char> buf(path.begin(), path.end());
    buf.push_back('\0');
    const int fd = mkstemp(buf.data());
    if (fd < 0) throw std::runtime_error(path + ": cannot create the solver's model file");
    path = buf.data();
    FILE* f = fdopen(fd, "w");
    const bool written = f && fwrite(lp.data(), 1, lp.size(), f) == lp.size();
    if (f) fclose(f);
    if (!written) {
      unlink(path.c_str());
      throw std::runtime_error(path + ": cannot write the solver's model");
    }
    const std::string cmd = "glpsol --lp '" + path + "' --tmlim " +
                            std::to_string(std::max(1, static_cast<int>(seconds))) + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    std::string out;
    if (p) {
      char chunk[4096];
      size_t n;
      while ((n = fread(chunk, 1, sizeof chunk, p)) > 0) out.append(chunk, n);
    }
    const int rc = p ? pclose(p) : -1;
    unlink(path.c_str());
    if (out.find("INTEGER OPTIMAL SOLUTION FOUND") != std::string::npos) return Solved::kFeasible;
    if (out.find("NO PRIMAL FEASIBLE SOLUTION") != std::string::npos ||
        out.find("NO INTEGER FEASIBLE SOLUTION") != std::string::npos)
      return Solved::kInfeasible;
    if (out.find("TIME LIMIT EXCEEDED") != std::string::npos) return Solved::kUnknown;
    throw std::runtime_error("glpsol failed (exit status " + std::to_string(rc) +
                             "); is glpk-utils installed? Its output: " + out.substr(0, 400));
  };
}

}  // namespace laas::sim

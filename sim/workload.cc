#include "sim/workload.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <set>
#include <sstream>

#include "util/text.h"

namespace laas::sim {

InputError::InputError(const std::string& file, int line, const std::string& reason)
    : std::runtime_error(file + ":" + std::to_string(line) + ": " + reason),
      file_(file),
      line_(line) {}

namespace {

using util::trim;

// Parses a whole field as a number; false if anything but the number is present.
bool to_double(const std::string& text, double* out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || end != text.c_str() + text.size() || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

bool to_int64(const std::string& text, std::int64_t* out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end != text.c_str() + text.size()) return false;
  *out = v;
  return true;
}

}  // namespace

Workload read_csv(std::istream& in, const std::string& name) {
  Workload w;
  std::set<std::int64_t> ids;
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    line = trim(line);
    if (line.empty()) continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string field;
    while (std::getline(ss, field, ',')) f.push_back(trim(field));
    if (!line.empty() && line.back() == ',') f.push_back("");
    if (f.size() != 4) {
      throw InputError(
          name, lineno,
          "expected 4 fields id,size,arrival,runtime, got " + std::to_string(f.size()));
    }
    Request r;
    std::int64_t size = 0;
    if (!to_int64(f[0], &r.id)) throw InputError(name, lineno, "bad id '" + f[0] + "'");
    if (!to_int64(f[1], &size)) {
      throw InputError(name, lineno, "bad size '" + f[1] + "' (an integer number of hosts)");
    }
    if (size <= 0) {
      throw InputError(name, lineno, "size must be positive, got " + std::to_string(size));
    }
    if (size > 1000000000) throw InputError(name, lineno, "size too large: " + f[1]);
    r.size = static_cast<int>(size);
    if (!to_double(f[2], &r.arrival)) {
      throw InputError(name, lineno, "bad arrival '" + f[2] + "'");
    }
    if (r.arrival < 0) throw InputError(name, lineno, "arrival must be >= 0, got " + f[2]);
    if (!to_double(f[3], &r.runtime)) {
      throw InputError(name, lineno, "bad runtime '" + f[3] + "'");
    }
    if (r.runtime <= 0) throw InputError(name, lineno, "runtime must be > 0, got " + f[3]);
    if (!ids.insert(r.id).second) {
      throw InputError(name, lineno, "duplicate tenant id " + std::to_string(r.id));
    }
    w.push_back(r);
  }
  if (in.bad()) throw InputError(name, lineno, "read error");
  return w;
}

Workload read_swf(std::istream& in, const std::string& name, int* skipped) {
  Workload w;
  int skip = 0;
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    std::string t = trim(line);
    if (t.empty() || t[0] == ';') continue;
    std::stringstream ss(t);
    std::vector<std::string> f;
    std::string field;
    while (ss >> field) f.push_back(field);
    if (f.size() < 5) {
      throw InputError(name, lineno,
                       "SWF record needs at least 5 fields, got " + std::to_string(f.size()));
    }
    Request r;
    double size = 0;
    if (!to_int64(f[0], &r.id)) throw InputError(name, lineno, "bad job id '" + f[0] + "'");
    if (!to_double(f[1], &r.arrival)) {
      throw InputError(name, lineno, "bad submit time '" + f[1] + "'");
    }
    if (!to_double(f[3], &r.runtime)) {
      throw InputError(name, lineno, "bad run time '" + f[3] + "'");
    }
    if (!to_double(f[4], &size)) {
      throw InputError(name, lineno, "bad allocated processors '" + f[4] + "'");
    }
    if (size <= 0 || r.runtime <= 0 || r.arrival < 0) {
      ++skip;
      continue;
    }
    // Found by fuzzing: casting 2e21 to int is undefined.
    if (size > std::numeric_limits<int>::max())
      throw InputError(name, lineno, "allocated processors '" + f[4] + "' is out of range");
    r.size = static_cast<int>(size);
    w.push_back(r);
  }
  if (skipped) *skipped = skip;
  return w;
}

std::string format_time(double t) {
  char buf[64];
  if (t == std::floor(t) && std::fabs(t) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", t);
  } else {
    std::snprintf(buf, sizeof buf, "%.17g", t);
  }
  return buf;
}

void write_csv(std::ostream& out, const Workload& w) {
  out << "# id,size,arrival,runtime\n";
  for (const auto& r : w) {
    out << r.id << ',' << r.size << ',' << format_time(r.arrival) << ',' << format_time(r.runtime)
        << '\n';
  }
}

}  // namespace laas::sim

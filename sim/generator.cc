#include "sim/generator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace laas::sim {

SizeKind parse_size_kind(const std::string& name) {
  if (name == "exp") return SizeKind::kExponential;
  if (name == "exp-release") return SizeKind::kExponentialRelease;
  if (name == "gauss") return SizeKind::kGaussian;
  if (name == "uniform") return SizeKind::kUniform;
  if (name == "pdf") return SizeKind::kPdf;
  if (name == "fixed") return SizeKind::kFixed;
  throw std::invalid_argument("unknown size distribution '" + name +
                              "' (known: exp, exp-release, gauss, uniform, pdf, fixed)");
}

std::string to_string(SizeKind kind) {
  switch (kind) {
    case SizeKind::kExponential:
      return "exp";
    case SizeKind::kExponentialRelease:
      return "exp-release";
    case SizeKind::kGaussian:
      return "gauss";
    case SizeKind::kUniform:
      return "uniform";
    case SizeKind::kPdf:
      return "pdf";
    case SizeKind::kFixed:
      return "fixed";
  }
  return "?";
}

std::vector<std::pair<int, double>> read_size_pdf(std::istream& in, const std::string& name) {
  std::vector<std::pair<int, double>> pdf;
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::stringstream ss(line);
    long long size = 0;
    double weight = 0;
    std::string extra;
    if (!(ss >> size)) {
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      throw InputError(name, lineno, "expected 'size weight'");
    }
    if (!(ss >> weight) || (ss >> extra)) throw InputError(name, lineno, "expected 'size weight'");
    if (size <= 0 || size > 1000000000) {
      throw InputError(name, lineno, "size must be positive, got " + std::to_string(size));
    }
    if (!(weight >= 0) || !std::isfinite(weight)) {
      throw InputError(name, lineno, "weight must be >= 0");
    }
    pdf.emplace_back(static_cast<int>(size), weight);
  }
  double total = 0;
  for (auto& p : pdf) total += p.second;
  if (pdf.empty() || total <= 0) throw InputError(name, lineno, "no positive weight in the file");
  return pdf;
}

double Rng::uniform() { return static_cast<double>(gen_() >> 11) * 0x1.0p-53; }

std::int64_t Rng::uniform_int(std::int64_t lo, std::int64_t hi) {
  if (hi <= lo) return lo;
  std::uint64_t span = static_cast<std::uint64_t>(hi - lo) + 1;
  // Rejection keeps it unbiased.
  std::uint64_t limit =
      std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % span;
  std::uint64_t x;
  do {
    x = gen_();
  } while (x >= limit);
  return lo + static_cast<std::int64_t>(x % span);
}

double Rng::exponential(double mean) { return -mean * std::log1p(-uniform()); }

double Rng::normal(double mean, double stddev) {
  if (have_spare_) {
    have_spare_ = false;
    return mean + stddev * spare_;
  }
  double u, v, s;
  do {  // Marsaglia's polar method
    u = 2 * uniform() - 1;
    v = 2 * uniform() - 1;
    s = u * u + v * v;
  } while (s >= 1 || s == 0);
  double f = std::sqrt(-2 * std::log(s) / s);
  spare_ = v * f;
  have_spare_ = true;
  return mean + stddev * u * f;
}

int sample_size(const SizeSpec& spec, Rng& rng) {
  const int max = std::max(1, spec.max_size);
  switch (spec.kind) {
    case SizeKind::kExponential:
      for (;;) {
        double s = std::ceil(rng.exponential(spec.mean));
        if (s >= 1 && s <= max) return static_cast<int>(s);
      }
    case SizeKind::kExponentialRelease: {
      double s = std::floor(rng.exponential(spec.mean));
      if (s < 1) s = std::round(spec.mean);
      return static_cast<int>(std::clamp(s, 1.0, static_cast<double>(max)));
    }
    case SizeKind::kGaussian: {
      double sd = spec.stddev < 0 ? spec.mean / 5 : spec.stddev;
      for (int tries = 0; tries < 1000000; ++tries) {
        double s = std::round(rng.normal(spec.mean, sd));
        if (s >= 1 && s <= max) return static_cast<int>(s);
      }
      return static_cast<int>(std::clamp(std::round(spec.mean), 1.0, static_cast<double>(max)));
    }
    case SizeKind::kUniform: {
      auto lo = static_cast<std::int64_t>(std::max(1.0, std::round(0.2 * spec.mean)));
      auto hi = static_cast<std::int64_t>(std::max(1.0, std::round(1.8 * spec.mean)));
      return static_cast<int>(std::min<std::int64_t>(rng.uniform_int(lo, hi), max));
    }
    case SizeKind::kPdf: {
      double total = 0;
      for (auto& p : spec.pdf) {
        if (p.first <= max) total += p.second;
      }
      if (total <= 0) throw std::invalid_argument("size PDF has no weight at or below max size");
      double x = rng.uniform() * total;
      for (auto& p : spec.pdf) {
        if (p.first > max) continue;
        if (x < p.second) return p.first;
        x -= p.second;
      }
      for (auto it = spec.pdf.rbegin(); it != spec.pdf.rend(); ++it) {
        if (it->first <= max && it->second > 0) return it->first;
      }
      return 1;
    }
    case SizeKind::kFixed:
      return static_cast<int>(std::clamp(std::round(spec.mean), 1.0, static_cast<double>(max)));
  }
  return 1;
}

Workload generate(const GenSpec& spec) {
  if (spec.tenants < 0) throw std::invalid_argument("tenant count must be >= 0");
  if (!(spec.runtime_min > 0) || spec.runtime_max < spec.runtime_min) {
    throw std::invalid_argument("runtime range must satisfy 0 < min <= max");
  }
  if (spec.size.kind != SizeKind::kPdf && !(spec.size.mean > 0)) {
    throw std::invalid_argument("mean size must be positive");
  }
  Rng rng(spec.seed);
  const bool integral_runtime = spec.runtime_min == std::floor(spec.runtime_min) &&
                                spec.runtime_max == std::floor(spec.runtime_max);
  Workload w;
  w.reserve(spec.tenants);
  double t = 0;
  for (int i = 0; i < spec.tenants; ++i) {
    Request r;
    r.id = i + 1;
    r.size = sample_size(spec.size, rng);
    if (integral_runtime) {
      r.runtime = static_cast<double>(rng.uniform_int(static_cast<std::int64_t>(spec.runtime_min),
                                                      static_cast<std::int64_t>(spec.runtime_max)));
    } else {
      r.runtime = spec.runtime_min + (spec.runtime_max - spec.runtime_min) * rng.uniform();
    }
    if (spec.mean_interarrival > 0 && i > 0)
      t += std::round(rng.exponential(spec.mean_interarrival));
    r.arrival = t;
    w.push_back(r);
  }
  return w;
}

}  // namespace laas::sim

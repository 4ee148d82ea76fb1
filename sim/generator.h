// Seeded, reproducible workload generation.
//
// Only std::mt19937_64 (whose output the C++ standard fixes) is used from <random>; every
// transform to uniform, exponential and normal variates is written here, so the same seed gives
// the same workload with any standard library.
#pragma once

#include <cstdint>
#include <istream>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "sim/workload.h"

namespace laas::sim {

enum class SizeKind {
  kExponential,         // ceil(Exp(mean)), resampled while > max_size ("truncated")
  kExponentialRelease,  // the paper release's generator: floor(Exp(mean)), 0 becomes mean
  kGaussian,            // round(N(mean, stddev)), resampled while outside [1, max_size]
  kUniform,             // integer uniform in [round(0.2 mean), round(1.8 mean)], at least 1
  kPdf,                 // explicit size histogram
  kFixed,               // always round(mean)
};

struct SizeSpec {
  SizeKind kind = SizeKind::kExponential;
  double mean = 8;
  double stddev = -1;  // Gaussian only; < 0 means mean / 5 (the paper's N(x, x/5))
  std::vector<std::pair<int, double>> pdf;  // (size, weight) for kPdf
  int max_size = 11664;                     // truncation: the cluster size
};

struct GenSpec {
  SizeSpec size;
  int tenants = 10000;
  double runtime_min = 20;  // uniform runtime; integers when both bounds are integers
  double runtime_max = 3000;
  double mean_interarrival = 0;  // 0: everyone arrives at time 0; else Poisson arrivals
  std::uint64_t seed = 1;
};

// Parses a kind name: exp, exp-release, gauss, uniform, pdf, fixed. Throws invalid_argument.
SizeKind parse_size_kind(const std::string& name);
std::string to_string(SizeKind kind);

// Size histogram: lines "size weight" (weights need not sum to 1), `#` comments. Throws
// InputError naming name:line.
std::vector<std::pair<int, double>> read_size_pdf(std::istream& in, const std::string& name);

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : gen_(seed) {}
  double uniform();                                            // [0, 1)
  std::int64_t uniform_int(std::int64_t lo, std::int64_t hi);  // inclusive
  double exponential(double mean);
  double normal(double mean, double stddev);

 private:
  std::mt19937_64 gen_;
  bool have_spare_ = false;
  double spare_ = 0;
};

int sample_size(const SizeSpec& spec, Rng& rng);
Workload generate(const GenSpec& spec);

}  // namespace laas::sim

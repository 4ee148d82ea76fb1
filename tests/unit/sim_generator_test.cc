#include <gtest/gtest.h>

#include <map>

#include "sim/generator.h"

using namespace laas::sim;

namespace {
double mean_size(const Workload& w) {
  double s = 0;
  for (auto& r : w) s += r.size;
  return s / static_cast<double>(w.size());
}
}  // namespace

TEST(SimGenerator, SameSeedSameWorkload) {
  GenSpec g;
  g.tenants = 500;
  g.seed = 42;
  auto a = generate(g), b = generate(g);
  g.seed = 43;
  auto c = generate(g);
  ASSERT_EQ(a.size(), 500u);
  int diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].size, b[i].size);
    EXPECT_EQ(a[i].runtime, b[i].runtime);
    diff += a[i].size != c[i].size;
  }
  EXPECT_GT(diff, 100);
}

TEST(SimGenerator, ExponentialMeanAndRuntimes) {
  GenSpec g;
  g.tenants = 40000;
  g.size.mean = 8;
  auto w = generate(g);
  // ceil(Exp(8)) has mean 1 / (1 - e^{-1/8}) = 8.51.
  EXPECT_NEAR(mean_size(w), 8.51, 0.15);
  double rt = 0;
  for (auto& r : w) {
    EXPECT_GE(r.size, 1);
    EXPECT_GE(r.runtime, 20);
    EXPECT_LE(r.runtime, 3000);
    EXPECT_EQ(r.runtime, static_cast<int>(r.runtime));
    EXPECT_EQ(r.arrival, 0);
    rt += r.runtime;
  }
  EXPECT_NEAR(rt / w.size(), 1510, 15);
}

TEST(SimGenerator, ReleaseExponentialHasSpikeAtMean) {
  GenSpec g;
  g.tenants = 20000;
  g.size.kind = SizeKind::kExponentialRelease;
  auto w = generate(g);
  std::map<int, int> hist;
  for (auto& r : w) hist[r.size]++;
  // floor(Exp(8)) = 0 with probability 1 - e^{-1/8} = 0.1175 and becomes 8, on top of the
  // natural P(8) = 0.0431: the release file has 1586 of 10,000 at size 8.
  EXPECT_NEAR(hist[8] / 20000.0, 0.1606, 0.01);
  EXPECT_NEAR(hist[1] / 20000.0, 0.1037, 0.01);
  EXPECT_NEAR(mean_size(w), 8.56, 0.2);
}

TEST(SimGenerator, GaussianUniformPdfTruncation) {
  GenSpec g;
  g.tenants = 20000;
  g.size.kind = SizeKind::kGaussian;
  g.size.mean = 100;
  auto w = generate(g);
  EXPECT_NEAR(mean_size(w), 100, 0.6);
  g.size.kind = SizeKind::kUniform;
  w = generate(g);
  int lo = 1 << 30, hi = 0;
  for (auto& r : w) {
    lo = std::min(lo, r.size);
    hi = std::max(hi, r.size);
  }
  EXPECT_EQ(lo, 20);
  EXPECT_EQ(hi, 180);
  g.size.kind = SizeKind::kExponential;
  g.size.mean = 5000;
  g.size.max_size = 32;
  w = generate(g);
  for (auto& r : w) EXPECT_LE(r.size, 32);
  g.size.kind = SizeKind::kPdf;
  g.size.pdf = {{1, 1}, {16, 3}};
  g.size.max_size = 100;
  w = generate(g);
  std::map<int, int> hist;
  for (auto& r : w) hist[r.size]++;
  EXPECT_EQ(hist.size(), 2u);
  EXPECT_NEAR(hist[16] / 20000.0, 0.75, 0.015);
}

TEST(SimGenerator, BadNames) {
  EXPECT_THROW(parse_size_kind("poisson"), std::invalid_argument);
  GenSpec g;
  g.runtime_min = 0;
  EXPECT_THROW(generate(g), std::invalid_argument);
}

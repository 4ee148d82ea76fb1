// Prometheus text exposition: the format the cluster's monitoring already collects,
// through node_exporter's textfile collector or `laasctl metrics`. A pure model and writer;
// the service fills it from its own state (ServiceMetrics::metrics_text).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace laas::service {

struct MetricSample {
  std::map<std::string, std::string> labels;
  double value = 0;
};

struct MetricFamily {
  std::string name;  // laas_...; counters end in _total
  std::string help;
  std::string type;                   // gauge, counter, histogram
  std::vector<MetricSample> samples;  // for a histogram: filled by Histogram::family
};

// Observations of a duration, as a Prometheus histogram with fixed bucket bounds (seconds).
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)) {
    counts_.assign(bounds_.size(), 0);
  }
  void observe(double v);
  MetricFamily family(const std::string& name, const std::string& help) const;

 private:
  std::vector<double> bounds_;
  std::vector<long> counts_;  // per bound, not cumulative
  long count_ = 0;
  double sum_ = 0;
};

// The exposition text: HELP and TYPE lines, then the samples; label values escaped.
std::string exposition(const std::vector<MetricFamily>& families);

}  // namespace laas::service

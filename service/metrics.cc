#include "service/metrics.h"

#include <cmath>
#include <sstream>

namespace laas::service {
namespace {

std::string escape_label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string escape_help(const std::string& v) {
  std::string out;
  for (char c : v) out += c == '\\' ? "\\\\" : c == '\n' ? "\\n" : std::string(1, c);
  return out;
}

std::string number(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (std::isnan(v)) return "NaN";
  std::ostringstream out;
  out.precision(15);
  out << v;
  return out.str();
}

}  // namespace

void Histogram::observe(double v) {
  for (size_t i = 0; i < bounds_.size(); ++i)
    if (v <= bounds_[i]) {
      ++counts_[i];
      break;
    }
  ++count_;
  sum_ += v;
}

MetricFamily Histogram::family(const std::string& name, const std::string& help) const {
  MetricFamily f{name, help, "histogram", {}};
  long cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    f.samples.push_back(
        {{{"__suffix", "_bucket"}, {"le", number(bounds_[i])}}, static_cast<double>(cumulative)});
  }
  f.samples.push_back({{{"__suffix", "_bucket"}, {"le", "+Inf"}}, static_cast<double>(count_)});
  f.samples.push_back({{{"__suffix", "_sum"}}, sum_});
  f.samples.push_back({{{"__suffix", "_count"}}, static_cast<double>(count_)});
  return f;
}

std::string exposition(const std::vector<MetricFamily>& families) {
  std::ostringstream out;
  for (const auto& f : families) {
    out << "# HELP " << f.name << " " << escape_help(f.help) << "\n";
    out << "# TYPE " << f.name << " " << f.type << "\n";
    for (const auto& s : f.samples) {
      std::string suffix;
      std::string labels;
      for (const auto& [k, v] : s.labels) {
        if (k == "__suffix") {
          suffix = v;
          continue;
        }
        labels += (labels.empty() ? "" : ",") + k + "=\"" + escape_label(v) + "\"";
      }
      out << f.name << suffix;
      if (!labels.empty()) out << "{" << labels << "}";
      out << " " << number(s.value) << "\n";
    }
  }
  return out.str();
}

}  // namespace laas::service

// The Prometheus text exposition: HELP/TYPE lines, escaped label values, cumulative
// histogram buckets. The integration test has Prometheus' own parser (promtool) read the file.
#include "service/metrics.h"

#include <gtest/gtest.h>

using namespace laas::service;

TEST(Metrics, ExpositionEscapesLabelValues) {
  const std::string text = exposition(
      {{"laas_tenant_hosts", "Hosts\nof a tenant", "gauge", {{{{"tenant", "a\"b\\c"}}, 3}}}});
  EXPECT_EQ(text,
            "# HELP laas_tenant_hosts Hosts\\nof a tenant\n"
            "# TYPE laas_tenant_hosts gauge\n"
            "laas_tenant_hosts{tenant=\"a\\\"b\\\\c\"} 3\n");
}

TEST(Metrics, HistogramBucketsAreCumulative) {
  Histogram h({0.1, 1});
  for (double v : {0.05, 0.5, 0.7, 30.0}) h.observe(v);
  const std::string text = exposition({h.family("laas_x_seconds", "x")});
  EXPECT_NE(text.find("laas_x_seconds_bucket{le=\"0.1\"} 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("laas_x_seconds_bucket{le=\"1\"} 3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("laas_x_seconds_bucket{le=\"+Inf\"} 4\n"), std::string::npos) << text;
  EXPECT_NE(text.find("laas_x_seconds_sum 31.25\n"), std::string::npos) << text;
  EXPECT_NE(text.find("laas_x_seconds_count 4\n"), std::string::npos) << text;
}

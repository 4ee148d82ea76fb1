#include <gtest/gtest.h>

#include <sstream>

#include "sim/generator.h"
#include "sim/workload.h"

using laas::sim::InputError;
using laas::sim::read_csv;
using laas::sim::read_swf;

namespace {

std::string workload_error_of(const std::string& text) {
  std::istringstream in(text);
  try {
    read_csv(in, "jobs.csv");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(SimWorkload, ReadsReleaseCsv) {
  std::istringstream in("# id,size,arrival,runtime\n1, 3, 0, 1450\n\n2,2,5,1124 # late\n");
  auto w = read_csv(in, "x.csv");
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].id, 1);
  EXPECT_EQ(w[0].size, 3);
  EXPECT_EQ(w[0].runtime, 1450);
  EXPECT_EQ(w[1].arrival, 5);
}

TEST(SimWorkload, ErrorsNameFileAndLine) {
  EXPECT_EQ(workload_error_of("1,3,0,10\n2,3,0\n"),
            "jobs.csv:2: expected 4 fields id,size,arrival,runtime, got 3");
  EXPECT_EQ(workload_error_of("1,3,0,10\n\n# c\n2,-4,0,10\n"),
            "jobs.csv:4: size must be positive, got -4");
  EXPECT_EQ(workload_error_of("1,abc,0,10\n"),
            "jobs.csv:1: bad size 'abc' (an integer number of hosts)");
  EXPECT_EQ(workload_error_of("1,3,0,0\n"), "jobs.csv:1: runtime must be > 0, got 0");
  EXPECT_EQ(workload_error_of("1,3,-1,5\n"), "jobs.csv:1: arrival must be >= 0, got -1");
  EXPECT_EQ(workload_error_of("7,3,0,5\n7,1,0,5\n"), "jobs.csv:2: duplicate tenant id 7");
  EXPECT_EQ(workload_error_of("1,3,0,5,\n"),
            "jobs.csv:1: expected 4 fields id,size,arrival,runtime, got 5");
  std::istringstream in("1,2.5,0,4\n");
  try {
    read_csv(in, "f.csv");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "f.csv");
    EXPECT_EQ(e.line(), 1);
  }
}

TEST(SimWorkload, SwfSkipsNonJobs) {
  std::istringstream in(
      "; Version: 2.2\n"
      ";\n"
      "1 0 5 100 4 -1 -1 4 -1 -1 1\n"
      "2 10 0 50 -1 -1 -1 8 -1 -1 0\n"  // size -1: not a job
      "3 20 1 0 8 -1 -1 8 -1 -1 0\n"    // never ran
      "4 30 2 7 16 -1 -1 16 -1 -1 1\n");
  int skipped = 0;
  auto w = read_swf(in, "t.swf", &skipped);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(skipped, 2);
  EXPECT_EQ(w[0].size, 4);
  EXPECT_EQ(w[0].runtime, 100);
  EXPECT_EQ(w[1].id, 4);
  EXPECT_EQ(w[1].arrival, 30);
  std::istringstream bad("1 0 5\n");
  EXPECT_THROW(read_swf(bad, "t.swf"), InputError);
}

TEST(SimWorkload, CsvRoundTrip) {
  laas::sim::Workload w{{1, 3, 0, 10}, {2, 5, 12345678, 2.5}};
  std::stringstream s;
  laas::sim::write_csv(s, w);
  auto back = read_csv(s, "rt");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].arrival, 12345678);
  EXPECT_EQ(back[1].runtime, 2.5);
}

TEST(SimWorkload, SizePdfErrors) {
  std::istringstream ok("# size weight\n1 0.5\n2 0.25\n\n4 0.25\n");
  auto pdf = laas::sim::read_size_pdf(ok, "p");
  ASSERT_EQ(pdf.size(), 3u);
  EXPECT_EQ(pdf[2].first, 4);
  std::istringstream neg("1 0.5\n-2 0.5\n");
  try {
    laas::sim::read_size_pdf(neg, "sizes.pdf");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "sizes.pdf:2: size must be positive, got -2");
  }
}

// Found by fuzzing (tests/fuzz/regressions/workload_swf): casting a 2e21 processor count to
// int was undefined behaviour.
TEST(SimWorkload, SwfOutOfRangeSizesAreErrors) {
  std::istringstream huge("1 0 5 100 2e21 -1 -1 4 -1 -1 1\n");
  try {
    read_swf(huge, "t.swf");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "t.swf:1: allocated processors '2e21' is out of range");
  }
  std::istringstream largest("1 0 5 100 2147483647 -1 -1 4 -1 -1 1\n");
  EXPECT_EQ(read_swf(largest, "t.swf").at(0).size, 2147483647);
}

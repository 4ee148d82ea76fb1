// Tenant requests and the readers that turn text into them.
//
// Two input formats: the paper release's CSV (`id,size,arrival,runtime`, `#` comments) and the
// Standard Workload Format of the Parallel Workloads Archive. Readers take a stream plus the
// name to quote in errors, so they stay testable without files; opening files (and gunzip) is
// done by sim/io.h.
#pragma once

#include <cstdint>
#include <istream>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace laas::sim {

struct Request {
  std::int64_t id = 0;
  int size = 0;        // hosts requested
  double arrival = 0;  // time units
  double runtime = 0;  // time units, > 0
};

using Workload = std::vector<Request>;

// A malformed input; what() reads "FILE:LINE: reason".
class InputError : public std::runtime_error {
 public:
  InputError(const std::string& file, int line, const std::string& reason);
  const std::string& file() const { return file_; }
  int line() const { return line_; }

 private:
  std::string file_;
  int line_;
};

// `id,size,arrival,runtime` per line; blank lines and `#` comments are skipped; fields may be
// surrounded by spaces. Sizes must be >= 1, arrival >= 0, runtime > 0, ids unique.
Workload read_csv(std::istream& in, const std::string& name);

// SWF: `;` header lines skipped; size = field 5 (allocated processors), arrival = field 2
// (submit time), runtime = field 4 (run time). Records with size <= 0 (or runtime <= 0: the job
// never ran) are skipped and counted in `*skipped` if given.
Workload read_swf(std::istream& in, const std::string& name, int* skipped = nullptr);

// Integers without a decimal point, other values with full precision.
std::string format_time(double t);

void write_csv(std::ostream& out, const Workload& w);

}  // namespace laas::sim

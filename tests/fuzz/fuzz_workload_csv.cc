// laas-sim's CSV workloads and tenant-size distributions.
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

#include "sim/generator.h"
#include "sim/workload.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    std::istringstream in(text);
    (void)laas::sim::read_csv(in, "fuzz.csv");
  } catch (const std::runtime_error&) {
  }
  try {
    std::istringstream in(text);
    (void)laas::sim::read_size_pdf(in, "fuzz.pdf");
  } catch (const std::runtime_error&) {
  }
  return 0;
}

// laas.yaml: anything but a clean Config or std::runtime_error is a bug.
#include <cstdint>
#include <stdexcept>

#include "core/config.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  const auto path = laas::fuzz::write_input("laas.yaml", data, size);
  try {
    (void)laas::core::load_config(path);
  } catch (const std::runtime_error&) {
  }
  return 0;
}

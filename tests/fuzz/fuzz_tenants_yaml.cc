// tenants.yaml: requests or std::runtime_error naming the problem, nothing else.
#include <cstdint>
#include <stdexcept>

#include "core/tenants.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  const auto path = laas::fuzz::write_input("tenants.yaml", data, size);
  try {
    (void)laas::core::load_tenant_requests(path);
  } catch (const std::runtime_error&) {
  }
  return 0;
}

// The partitions.conf validator: diagnostics for anything, never a crash; a clean file's
// report is empty.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "export/partitions.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto check = laas::exports::validate_partitions(text);
  (void)check.report("partitions.conf");
  return 0;
}

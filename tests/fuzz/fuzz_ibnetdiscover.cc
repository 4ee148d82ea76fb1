// ibnetdiscover output and ibsim net files (one reader); a fabric that reads is also given to
// the fat-tree recognizer, as laas-audit does with a file from outside.
#include <cstdint>
#include <sstream>
#include <string>

#include "topology/ibnetdiscover.h"
#include "topology/recognize.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  laas::topology::Fabric fabric;
  try {
    fabric = laas::topology::read_ibnetdiscover(in, "fuzz");
  } catch (const laas::topology::ParseError&) {
    return 0;
  }
  if (fabric.nodes.size() <= 256) {
    const auto guid = fabric.nodes.empty() ? 0 : fabric.nodes.front().port_guid;
    (void)laas::topology::recognize(fabric, guid);
  }
  return 0;
}

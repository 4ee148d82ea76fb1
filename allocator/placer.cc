#include <stdexcept>

#include "allocator/placers.h"

namespace laas::allocator {

std::unique_ptr<Placer> make_placer(const std::string& name, bool management_way) {
  if (name == "laas") {
    LaasPlacer::Options options;
    options.management_way = management_way;
    return std::make_unique<LaasPlacer>(options);
  }
  if (name == "simple") return std::make_unique<SimplePlacer>();
  if (name == "unconstrained") return std::make_unique<UnconstrainedPlacer>();
  throw std::invalid_argument("unknown algorithm '" + name +
                              "': use laas, simple or unconstrained");
}

}  // namespace laas::allocator

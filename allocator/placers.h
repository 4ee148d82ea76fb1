// The three placement algorithms (see placer.h for the interface).
#pragma once

#include "allocator/placer.h"

namespace laas::allocator {

// Bare-metal: any free hosts, most-used leaves first; no links.
class UnconstrainedPlacer : public Placer {
 public:
  std::string name() const override { return "unconstrained"; }
  bool isolates() const override { return false; }
  PlaceResult place(const LinkState& state, int hosts) const override;
};

// Whole empty sub-trees (paper 4.1/4.2): a tenant that fits a leaf goes to the best-fitting
// leaf; a larger one gets ceil(N/m1) empty leaves of one pod with all their hosts and up-links,
// or ceil(N/pod size) empty pods with every host and link inside and above them.
class SimplePlacer : public Placer {
 public:
  std::string name() const override { return "simple"; }
  bool isolates() const override { return true; }
  PlaceResult place(const LinkState& state, int hosts) const override;
};

// Paper Algorithms 1-2: N = Q*D + R hosts on leaves sharing D common up-link columns (Theorems
// 1-2), larger D first, most-used leaves and pods first; across pods, whole leaves arranged as
// Q'*D' + R' per pod with one common level-2 column set on every level-2 switch of those pods.
class LaasPlacer : public Placer {
 public:
  std::string name() const override { return "laas"; }
  bool isolates() const override { return true; }
  PlaceResult place(const LinkState& state, int hosts) const override;
};

}  // namespace laas::allocator

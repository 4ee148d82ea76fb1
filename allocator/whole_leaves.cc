// whole_leaves: no two owners share a leaf. Where an SM programs no SL2VL first-hop drop (an
// OpenSM without the plugin, driven by laas-sdn through its `file` engine), two tenants on one
// leaf are kept apart by their P_Keys alone, since a forwarding table is indexed by destination
// only; a placement that never puts them there needs neither.
#include <memory>

#include "allocator/placer.h"

namespace laas::allocator {

namespace {

class WholeLeafPlacer : public Placer {
 public:
  explicit WholeLeafPlacer(std::unique_ptr<Placer> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  bool isolates() const override { return inner_->isolates(); }
  long budget_cuts() const override { return inner_->budget_cuts(); }
  std::unique_ptr<Placer> for_candidates() const override {
    auto c = inner_->for_candidates();
    return c ? whole_leaves(std::move(c)) : nullptr;
  }

  // The inner search on a copy in which every free host of a leaf some tenant holds a host of
  // is down: whatever it returns is on leaves no one else holds. Management hosts (reserved)
  // are no owner: they reach every tenant by design.
  PlaceResult place(const LinkState& state, int hosts) const override {
    const auto& tree = state.tree();
    const int per_leaf = tree.hosts_per_leaf();
    LinkState view = state;
    int hidden = 0;
    for (int leaf = 0; leaf < tree.num_leaves(); ++leaf) {
      bool held = false;
      for (int i = 0; i < per_leaf && !held; ++i) held = state.host_owner(leaf * per_leaf + i) >= 0;
      if (!held) continue;
      for (int i = 0; i < per_leaf; ++i) {
        const HostId h = leaf * per_leaf + i;
        if (state.host_owner(h) == kFree && !state.host_down(h)) {
          view.set_host_down(h, true);
          ++hidden;
        }
      }
    }
    auto r = inner_->place(hidden > 0 ? view : state, hosts);
    if (!r.placement && hidden > 0)
      r.reason += " (whole_leaves: " + std::to_string(hidden) +
                  " free host(s) on leaves another tenant holds are not offered)";
    return r;
  }

 private:
  std::unique_ptr<Placer> inner_;
};

}  // namespace

std::unique_ptr<Placer> whole_leaves(std::unique_ptr<Placer> inner) {
  return std::make_unique<WholeLeafPlacer>(std::move(inner));
}

std::unique_ptr<Placer> make_placer(const std::string& name, bool management_way, bool whole) {
  auto p = make_placer(name, management_way);
  return whole ? whole_leaves(std::move(p)) : std::move(p);
}

}  // namespace laas::allocator

#include "allocator/cluster.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "allocator/management_way.h"
#include "allocator/placers.h"
#include "check/checker.h"

namespace laas::allocator {

std::string validate_tenant_name(const std::string& name) {
  if (name.empty()) return "tenant name is empty";
  if (name.size() > 64)
    return "tenant name is " + std::to_string(name.size()) + " characters long; the limit is 64";
  for (unsigned char c : name)
    if (!(std::isalnum(c) || c == '_' || c == '.' || c == '-'))
      return "tenant name '" + name + "' has the character '" + std::string(1, c) +
             "'; use letters, digits, '_', '.' and '-'";
  return "";
}

Cluster::Cluster(const FatTree& tree, std::unique_ptr<Placer> placer)
    : tree_(tree), state_(tree_), placer_(std::move(placer)) {}

Outcome Cluster::validate_new(const std::string& name, int hosts) const {
  if (auto why = validate_tenant_name(name); !why.empty()) return {Status::kBadRequest, why};
  if (tenants_.count(name)) return {Status::kDuplicate, "tenant '" + name + "' already exists"};
  if (hosts <= 0)
    return {Status::kBadRequest, "tenant '" + name + "': number of hosts must be at least 1, got " +
                                     std::to_string(hosts)};
  if (hosts > tree().num_hosts())
    return {Status::kBadRequest, "tenant '" + name + "': " + std::to_string(hosts) +
                                     " hosts requested but the fabric has only " +
                                     std::to_string(tree().num_hosts())};
  return {};
}

Outcome Cluster::plan(const std::string& name, int hosts, Placement* out) const {
  if (auto v = validate_new(name, hosts); !v.ok()) return v;
  auto result = placer_->place(state_, hosts);
  if (!result.placement)
    return {Status::kRefused, "tenant '" + name + "' of " + std::to_string(hosts) +
                                  " hosts refused: " + result.reason + management_way_note(hosts)};
  if (out) *out = std::move(*result.placement);
  return {};
}

TenantIndex Cluster::next_index() {
  if (!free_indices_.empty()) {
    const TenantIndex i = free_indices_.back();
    free_indices_.pop_back();
    return i;
  }
  return next_index_++;
}

Outcome Cluster::add(const std::string& name, int hosts) {
  Placement placement;
  if (auto v = plan(name, hosts, &placement); !v.ok()) return v;
  return commit(Tenant{name, hosts, next_index(), std::move(placement)});
}

check::TenantView Cluster::shape_view(const std::string& name, const std::vector<HostId>& hosts,
                                      const std::vector<LinkId>& links) const {
  check::TenantView view{name, hosts, links, true};
  if (!leaf_rail_.empty()) view.leaf_rail = &leaf_rail_;
  return view;
}

Outcome Cluster::commit(Tenant t) {
  state_.assign(t.index, t.placement);
  const std::string name = t.name;
  auto& stored = tenants_[name] = std::move(t);
  return {Status::kOk,
          "tenant '" + name + "' placed: " + std::to_string(stored.placement.hosts.size()) +
              " hosts, " + std::to_string(stored.placement.links.size()) + " links, shape " +
              stored.placement.shape.text(),
          &stored};
}

Outcome Cluster::add_explicit(const std::string& name, int requested, const Placement& placement) {
  if (auto v = check_explicit(name, requested, placement); !v.ok()) return v;
  Tenant t{name, requested, next_index(), placement};
  if (t.placement.shape.leaves.d == 0) t.placement.shape = shape_of(tree(), t.placement.hosts);
  std::sort(t.placement.hosts.begin(), t.placement.hosts.end());
  std::sort(t.placement.links.begin(), t.placement.links.end());
  return commit(std::move(t));
}

Outcome Cluster::check_explicit(const std::string& name, int requested,
                                const Placement& placement) const {
  if (auto v = validate_new(name, requested); !v.ok()) return v;
  if (static_cast<int>(placement.hosts.size()) < requested)
    return {Status::kBadRequest, "tenant '" + name + "': placement holds " +
                                     std::to_string(placement.hosts.size()) + " hosts, " +
                                     std::to_string(requested) + " requested"};
  std::string why;
  if (!state_.can_assign(placement, &why))
    return {Status::kRefused, "tenant '" + name + "': " + why};
  if (placer_->isolates()) {
    const auto view = shape_view(name, placement.hosts, placement.links);
    auto violations = check::check_tenant_shape(tree(), view);
    if (!violations.empty())
      return {Status::kRefused, "tenant '" + name + "' violates the LaaS conditions: " +
                                    check::to_string(violations.front())};
  }
  return {};
}

Outcome Cluster::check_new_placement(const std::string& name, int requested,
                                     const Placement& placement) const {
  if (auto v = check_explicit(name, requested, placement); !v.ok()) return v;
  if (!placer_->keeps_management_way()) return {};
  if (const int leaf = leaf_without_management_way(state_, placement); leaf >= 0)
    return {Status::kRefused,
            "tenant '" + name + "' refused: " + management_way_reason(leaf_text(leaf))};
  return {};
}

Outcome Cluster::add_on_hosts(const std::string& name, const std::vector<HostId>& hosts,
                              bool dry_run, Placement* out) {
  if (auto v = validate_new(name, static_cast<int>(hosts.size())); !v.ok()) return v;
  auto result = place_on_hosts(state_, hosts);
  if (!result.placement)
    return {Status::kRefused, "tenant '" + name + "' on the given hosts refused: " + result.reason};
  if (const int leaf = placer_->keeps_management_way()
                           ? leaf_without_management_way(state_, *result.placement)
                           : -1;
      leaf >= 0)
    return {Status::kRefused, "tenant '" + name + "' on the given hosts refused: " +
                                  management_way_reason(leaf_text(leaf))};
  if (out) *out = *result.placement;
  if (dry_run) return {};
  return add_explicit(name, static_cast<int>(hosts.size()), *result.placement);
}

Outcome Cluster::remove(const std::string& name) {
  auto it = tenants_.find(name);
  if (it == tenants_.end()) return {Status::kNotFound, "no tenant named '" + name + "'"};
  state_.release(it->second.index, it->second.placement);
  free_indices_.push_back(it->second.index);
  // The reply first: `name` may be the erased entry's own key.
  Outcome removed{Status::kOk, "tenant '" + name + "' removed"};
  tenants_.erase(it);
  return removed;
}

std::vector<HostId> Cluster::reserve(const std::vector<HostId>& hosts) {
  std::vector<HostId> skipped;
  Placement p;
  for (HostId h : hosts) {
    if (h < 0 || h >= tree().num_hosts()) continue;
    if (state_.host_owner(h) == kFree)
      p.hosts.push_back(h);
    else if (state_.host_owner(h) != kReserved)
      skipped.push_back(h);
  }
  state_.assign(kReserved, p);
  return skipped;
}

void Cluster::unreserve(const std::vector<HostId>& hosts) {
  Placement p;
  for (HostId h : hosts)
    if (h >= 0 && h < tree().num_hosts() && state_.host_owner(h) == kReserved &&
        std::find(p.hosts.begin(), p.hosts.end(), h) == p.hosts.end())
      p.hosts.push_back(h);
  state_.release(kReserved, p);
}

std::optional<LinkId> Cluster::reserve_uplink(int leaf) {
  for (int c = tree().up_columns(1) - 1; c >= 0; --c) {
    const LinkId l = tree().l1_link(leaf, c);
    if (state_.link_faulty(l) || state_.link_owner(l) != kFree) continue;
    Placement p;
    p.links.push_back(l);
    state_.assign(kReserved, p);
    return l;
  }
  return std::nullopt;
}

const Tenant* Cluster::find(const std::string& name) const {
  auto it = tenants_.find(name);
  return it == tenants_.end() ? nullptr : &it->second;
}

}  // namespace laas::allocator

// ---- faults and repairs ---------------------------------------------------------

namespace laas::allocator {
namespace {

void sort_unique(std::vector<int>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

bool contains(const std::vector<int>& sorted, int x) {
  return std::binary_search(sorted.begin(), sorted.end(), x);
}

std::vector<int> minus(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  for (int x : a)
    if (std::find(b.begin(), b.end(), x) == b.end()) out.push_back(x);
  return out;
}

}  // namespace

std::vector<LinkId> Tenant::intended_links() const {
  std::vector<LinkId> links = placement.links;
  for (auto r = repairs.rbegin(); r != repairs.rend(); ++r) {
    links = minus(links, r->added);
    links.insert(links.end(), r->retired.begin(), r->retired.end());
  }
  sort_unique(links);
  return links;
}

std::string Cluster::leaf_text(int leaf) const {
  return switch_namer_ ? switch_namer_(1, leaf) : tree().switch_name(1, leaf);
}

std::string Cluster::management_way_note(int hosts) const {
  if (placer_->name() != "laas" || !placer_->keeps_management_way()) return "";
  LaasPlacer::Options options;
  options.management_way = false;
  options.remember = false;
  const auto without = LaasPlacer(options).place(state_, hosts);
  if (!without.placement) return "";
  const int leaf = leaf_without_management_way(state_, *without.placement);
  if (leaf < 0) return "";  // the rule did not decide it (a search bound did)
  return "; the placement that exists, " + without.placement->shape.text() +
         ", is not made: " + management_way_reason(leaf_text(leaf));
}

std::string Cluster::link_text(LinkId l) const {
  if (namer_) return namer_(l);
  const auto lo = tree().link_lower(l);
  return tree().switch_name(lo.level, lo.index) + " port " + std::to_string(lo.port);
}

Outcome Cluster::restore(const std::string& name, int requested, const Placement& intended,
                         const std::vector<Repair>& repairs) {
  if (auto v = validate_new(name, requested); !v.ok()) return v;
  if (static_cast<int>(intended.hosts.size()) < requested)
    return {Status::kBadRequest, "tenant '" + name + "': placement holds " +
                                     std::to_string(intended.hosts.size()) + " hosts, " +
                                     std::to_string(requested) + " requested"};
  Placement p = intended;
  sort_unique(p.hosts);
  sort_unique(p.links);
  p.idle.clear();
  if (p.hosts.size() != intended.hosts.size() || p.links.size() != intended.links.size())
    return {Status::kRefused, "tenant '" + name + "' names a host or link twice"};
  auto shape_ok = [&](const Placement& q, std::string* why) {
    if (!placer_->isolates()) return true;
    const auto view = shape_view(name, q.hosts, q.links);
    auto violations = check::check_tenant_shape(tree(), view);
    if (violations.empty()) return true;
    *why = check::to_string(violations.front());
    return false;
  };
  std::string why;
  if (!shape_ok(p, &why))
    return {Status::kRefused, "tenant '" + name + "' violates the LaaS conditions: " + why};
  for (const auto& r : repairs) {
    if (r.retired.empty() || r.retired.size() != r.added.size())
      return {Status::kRefused,
              "tenant '" + name + "': a repair does not pair retired and added links"};
    for (size_t i = 0; i < r.retired.size(); ++i) {
      const LinkId a = r.retired[i], b = r.added[i];
      if (a < 0 || b < 0 || a >= tree().total_links() || b >= tree().total_links() ||
          tree().link_level(a) != tree().link_level(b) ||
          tree().link_switch(a) != tree().link_switch(b))
        return {Status::kRefused,
                "tenant '" + name + "': a repair replaces a link by one of another switch"};
      if (!contains(p.links, a))
        return {Status::kRefused, "tenant '" + name + "': a repair retires " + link_text(a) +
                                      ", which the tenant does not route over"};
      if (contains(p.links, b) || contains(p.idle, b))
        return {Status::kRefused,
                "tenant '" + name + "': a repair adds " + link_text(b) + ", already held"};
    }
    p.links = minus(p.links, r.retired);
    p.links.insert(p.links.end(), r.added.begin(), r.added.end());
    p.idle.insert(p.idle.end(), r.retired.begin(), r.retired.end());
    sort_unique(p.links);
    sort_unique(p.idle);
  }
  if (!state_.can_hold(p, &why)) return {Status::kRefused, "tenant '" + name + "': " + why};
  if (!repairs.empty() && !shape_ok(p, &why))
    return {Status::kRefused,
            "tenant '" + name + "' as repaired violates the LaaS conditions: " + why};
  Tenant t{name, requested, next_index(), p, repairs};
  if (t.placement.shape.leaves.d == 0) t.placement.shape = shape_of(tree(), t.placement.hosts);
  return commit(std::move(t));
}

void Cluster::set_faults(const Faults& faults) {
  const FatTree& t = tree();
  std::vector<char> link_bad(t.total_links(), 0), host_bad(t.num_hosts(), 0);
  for (LinkId l : faults.links)
    if (l >= 0 && l < t.total_links()) link_bad[l] = 1;
  for (HostId h : faults.hosts)
    if (h >= 0 && h < t.num_hosts()) host_bad[h] = 1;
  if (!faults.switches.empty()) {
    std::vector<std::vector<char>> down(t.height() + 1);
    for (int level = 1; level <= t.height(); ++level) down[level].assign(t.num_switches(level), 0);
    for (const auto& [level, index] : faults.switches) {
      if (level < 1 || level > t.height() || index < 0 || index >= t.num_switches(level)) continue;
      down[level][index] = 1;
      if (level == 1)
        for (int s = 0; s < t.hosts_per_leaf(); ++s) host_bad[t.host_at(index, s)] = 1;
    }
    for (LinkId l = 0; l < t.total_links(); ++l) {
      const auto lo = t.link_lower(l), up = t.link_upper(l);
      if (down[lo.level][lo.index] || down[up.level][up.index]) link_bad[l] = 1;
    }
  }
  drained_.assign(t.total_links(), 0);
  for (LinkId l : faults.drained)
    if (l >= 0 && l < t.total_links() && !link_bad[l]) drained_[l] = 1;
  // The allocator sees a drained link as a faulty one: never placed, repaired off.
  for (LinkId l = 0; l < t.total_links(); ++l)
    state_.set_faulty(l, link_bad[l] != 0 || drained_[l] != 0);
  for (HostId h = 0; h < t.num_hosts(); ++h) state_.set_host_down(h, host_bad[h] != 0);
  faults_ = faults;
}

Health Cluster::health(const Tenant& tenant) const {
  const FatTree& t = tree();
  Health out;
  for (HostId h : tenant.placement.hosts)
    if (state_.host_down(h)) out.down_hosts.push_back(h);
  std::map<int, SlotSet> h1, h2;  // healthy columns routed over, per leaf / level-2 switch
  for (HostId h : tenant.placement.hosts) h1[t.leaf_of_host(h)];
  for (LinkId l : tenant.placement.links) {
    if (state_.link_faulty(l) && !link_drained(l)) {
      out.faulty_links.push_back(l);
      continue;
    }
    (t.link_level(l) == 1 ? h1 : h2)[t.link_switch(l)].set(t.link_column(l));
  }
  if (!placer_->isolates()) return out;  // bare metal: no dedicated paths to lose
  const int p2 = t.p(2);
  const int p3 = t.height() == 3 ? t.p(3) : 1;
  const int w3 = t.height() == 3 ? t.w(3) : 1;
  // Level-2 switches (within the pod, by b) a leaf reaches over its healthy columns.
  auto reach2 = [&](int leaf) {
    SlotSet r;
    for (int c = 0; c < t.up_columns(1); ++c)
      if (h1[leaf][c]) r.set(c / p2);
    return r;
  };
  auto reach3 = [&](int sw) {
    SlotSet r;
    auto it = h2.find(sw);
    if (it == h2.end()) return r;
    for (int c = 0; c < t.up_columns(2); ++c)
      if (it->second[c]) r.set(c / p3);
    return r;
  };
  std::vector<int> leaves;
  for (const auto& [leaf, cols] : h1) leaves.push_back(leaf);
  for (size_t i = 0; i < leaves.size(); ++i)
    for (size_t j = i + 1; j < leaves.size(); ++j) {
      const int a = leaves[i], b = leaves[j];
      const SlotSet common = reach2(a) & reach2(b);
      bool ok = false;
      if (t.pod_of_leaf(a) == t.pod_of_leaf(b)) {
        ok = common.any();
      } else {
        for (int b2 = 0; b2 < t.switches_per_pod(2) && !ok; ++b2) {
          if (!common[b2]) continue;
          ok = (reach3(t.level2_switch(t.pod_of_leaf(a), b2)) &
                reach3(t.level2_switch(t.pod_of_leaf(b), b2)))
                   .any();
        }
      }
      (void)w3;
      if (!ok) out.lost_leaf_pairs.push_back({a, b});
    }
  return out;
}

// Undoes every repair whose retired links are all healthy again, and with it every later repair
// that retired one of its added links (that later repair then has nothing left to stand in
// for: the tenant goes back to the column the first one replaced). Later repairs are undone
// first, so each undo finds its added links in use.
bool Cluster::undo_cleared(Tenant& t, std::vector<std::string>& log) {
  const int n = static_cast<int>(t.repairs.size());
  std::vector<char> undo(n, 0);
  for (int i = 0; i < n; ++i) {
    const Repair& r = t.repairs[i];
    bool cleared = true;
    for (LinkId l : r.retired) cleared = cleared && !state_.link_faulty(l);
    for (int j = 0; j < i && !cleared; ++j)
      if (undo[j])
        for (LinkId l : r.retired)
          if (std::find(t.repairs[j].added.begin(), t.repairs[j].added.end(), l) !=
              t.repairs[j].added.end())
            cleared = true;
    undo[i] = cleared;
  }
  bool changed = false;
  for (int i = n - 1; i >= 0; --i) {
    if (!undo[i]) continue;
    const Repair r = t.repairs[i];
    state_.release(t.index, Placement{{}, r.added, {}, {}});
    t.placement.links = minus(t.placement.links, r.added);
    t.placement.links.insert(t.placement.links.end(), r.retired.begin(), r.retired.end());
    t.placement.idle = minus(t.placement.idle, r.retired);
    sort_unique(t.placement.links);
    t.repairs.erase(t.repairs.begin() + i);
    log.push_back("tenant '" + t.name + "': fault under " + link_text(r.retired.front()) +
                  " cleared, repair undone: back to its links as placed, " +
                  std::to_string(r.added.size()) + " spare link(s) freed");
    changed = true;
  }
  return changed;
}

bool Cluster::try_repair(Tenant& t, LinkId broken, std::vector<std::string>& log) {
  const FatTree& tr = tree();
  if (!contains(t.placement.links, broken)) return false;
  const int level = tr.link_level(broken);
  const int column = tr.link_column(broken);
  const int sw = tr.link_switch(broken);
  // The switches whose column sets must stay common with `sw` (Theorem 2): the tenant's leaves
  // (level 1), or its level-2 switches of the same FBG_2 (level 2), that route over `column`.
  std::vector<int> group;
  std::set<int> pods;
  for (HostId h : t.placement.hosts) pods.insert(tr.pod_of_leaf(tr.leaf_of_host(h)));
  for (LinkId l : t.placement.links) {
    if (tr.link_level(l) != level || tr.link_column(l) != column) continue;
    const int s = tr.link_switch(l);
    if (level == 2 && s % tr.switches_per_pod(2) != sw % tr.switches_per_pod(2)) continue;
    group.push_back(s);
  }
  SlotSet free;
  for (int c = 0; c < tr.up_columns(level); ++c) free.set(c);
  for (int s : group) free &= state_.free_columns(level, s);
  // Across pods, a level-1 column must lead to the same level-2 switch, or the flows into each
  // FBG_2 -- and with them the level-2 links the tenant needs -- would change.
  if (level == 1 && pods.size() > 1)
    for (int c = 0; c < tr.up_columns(1); ++c)
      if (c / tr.p(2) != column / tr.p(2)) free.reset(c);
  for (int c = 0; c < tr.up_columns(level); ++c) {
    if (!free[c]) continue;
    // A repair is a re-placement: it obeys the management-way rule like a new placement.
    bool keeps_way = true;
    for (int s : group)
      keeps_way = keeps_way && (level != 1 || !placer_->keeps_management_way() ||
                                keeps_management_way(state_, s, 0, 1, t.index));
    if (!keeps_way) continue;
    Repair r;
    for (int s : group) {
      r.retired.push_back(level == 1 ? tr.l1_link(s, column) : tr.l2_link(s, column));
      r.added.push_back(level == 1 ? tr.l1_link(s, c) : tr.l2_link(s, c));
    }
    std::vector<LinkId> active = minus(t.placement.links, r.retired);
    active.insert(active.end(), r.added.begin(), r.added.end());
    sort_unique(active);
    const auto view = shape_view(t.name, t.placement.hosts, active);
    if (!check::check_tenant_shape(tr, view).empty()) continue;
    state_.assign(t.index, Placement{{}, r.added, {}, {}});
    t.placement.links = std::move(active);
    t.placement.idle.insert(t.placement.idle.end(), r.retired.begin(), r.retired.end());
    sort_unique(t.placement.idle);
    std::string where;
    for (LinkId l : r.added) where += (where.empty() ? "" : ", ") + link_text(l);
    log.push_back("tenant '" + t.name + "' repaired online: " + link_text(broken) +
                  (link_drained(broken) ? " is drained" : " is faulty") + "; column " +
                  std::to_string(column) + " replaced by free column " + std::to_string(c) + " (" +
                  where + ")");
    t.repairs.push_back(std::move(r));
    return true;
  }
  return false;
}

std::vector<std::string> Cluster::reconcile() {
  std::vector<std::string> log;
  // Every undo first: an undo frees spare columns another tenant's repair may need, so doing
  // them tenant by tenant in between repairs would leave a state that a reload (restore +
  // reconcile) would change.
  for (auto& [name, t] : tenants_) undo_cleared(t, log);
  for (auto& [name, t] : tenants_) {
    if (!placer_->isolates()) continue;
    {
      // Only tenants whose placement satisfies Theorems 1-2 are repaired by columns; the Simple
      // scheme's whole sub-trees hold every column anyway.
      const auto view = shape_view(t.name, t.placement.hosts, t.placement.links);
      if (!check::check_tenant_shape(tree(), view).empty()) continue;
    }
    std::set<LinkId> tried;
    for (bool progress = true; progress;) {
      progress = false;
      for (LinkId l : t.placement.links) {
        if (!state_.link_faulty(l) || !tried.insert(l).second) continue;
        if (try_repair(t, l, log)) {
          progress = true;
          break;
        }
      }
    }
  }
  return log;
}

}  // namespace laas::allocator

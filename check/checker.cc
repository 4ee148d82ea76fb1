// Written against the paper's Theorems, not against the allocator: nothing here may include
// allocator headers.
#include "check/checker.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace laas::check {
namespace {

using ColumnSet = std::set<int>;

std::string describe(const ColumnSet& s) {
  std::ostringstream out;
  out << "{";
  bool first = true;
  for (int c : s) {
    out << (first ? "" : ",") << c;
    first = false;
  }
  out << "}";
  return out.str();
}

// The per-level shape of Theorem 1: every unit holds the maximum D except at most one smaller.
struct Counted {
  int d = 0;
  int r_unit = -1;  // the one smaller unit, or -1
  bool ok = true;
};

Counted theorem1(const std::map<int, int>& count_per_unit) {
  Counted out;
  for (const auto& [unit, n] : count_per_unit) out.d = std::max(out.d, n);
  for (const auto& [unit, n] : count_per_unit) {
    if (n == out.d) continue;
    if (out.r_unit >= 0) out.ok = false;
    out.r_unit = unit;
  }
  return out;
}

class TenantShape {
 public:
  TenantShape(const FatTree& tree, const TenantView& t) : tree_(tree), t_(t) {
    for (HostId h : t.hosts) {
      const int leaf = tree.leaf_of_host(h);
      ++hosts_per_leaf_[leaf];
      pods_.insert(tree.pod_of_leaf(leaf));
    }
    for (LinkId l : t.links) {
      if (tree.link_level(l) == 1)
        l1_[tree.link_switch(l)].insert(tree.link_column(l));
      else
        l2_[tree.link_switch(l)].insert(tree.link_column(l));
    }
  }

  std::vector<Violation> check() {
    if (t_.hosts.empty()) add("no-hosts", "the tenant holds no hosts");
    for (const auto& [leaf, cols] : l1_)
      if (!hosts_per_leaf_.count(leaf))
        add("link-off-tenant", tree_.switch_name(1, leaf) + " holds " +
                                   std::to_string(cols.size()) +
                                   " of the tenant's up-links but none of its hosts");
    if (pods_.size() <= 1) {
      if (!l2_.empty()) add("needless-l2-links", "a tenant inside one pod holds level-2 up-links");
      if (rails_used() > 1)
        check_rails();
      else if (hosts_per_leaf_.size() > 1)
        check_one_pod(hosts_per_leaf_);
    } else {
      check_across_pods();
    }
    return std::move(found_);
  }

 private:
  void add(const std::string& rule, const std::string& detail) {
    found_.push_back({t_.name, rule, detail});
  }

  int rail_of(int leaf) const {
    return t_.leaf_rail && leaf < static_cast<int>(t_.leaf_rail->size()) ? (*t_.leaf_rail)[leaf]
                                                                         : 0;
  }
  int rails_used() const {
    std::set<int> rails;
    for (const auto& [leaf, n] : hosts_per_leaf_) rails.insert(rail_of(leaf));
    return static_cast<int>(rails.size());
  }

  // Theorems 1-2 on each rail's leaves; then across rails: every rail's full leaves use one
  // column set, and the remainder leaves of any two rails share a column, or a port on one
  // rail's remainder leaf could not reach a port on another's over the tenant's links.
  void check_rails() {
    std::map<int, std::map<int, int>> per_rail;
    for (const auto& [leaf, n] : hosts_per_leaf_) per_rail[rail_of(leaf)][leaf] = n;
    const ColumnSet* common = nullptr;
    int common_rail = -1;
    std::vector<std::pair<int, const ColumnSet*>> remainders;  // (leaf, its columns)
    for (const auto& [rail, counts] : per_rail) {
      const size_t before = found_.size();
      const Rail one = check_one_pod(counts);
      if (found_.size() != before) return;
      if (!one.common) continue;
      if (!common) {
        common = one.common;
        common_rail = rail;
      } else if (*one.common != *common) {
        add("theorem2-rails", "rail " + std::to_string(rail) + " uses up-link columns " +
                                  describe(*one.common) + ", rail " + std::to_string(common_rail) +
                                  " " + describe(*common));
        return;
      }
      if (one.remainder >= 0) remainders.push_back({one.remainder, &l1_[one.remainder]});
    }
    for (size_t i = 0; i < remainders.size(); ++i)
      for (size_t j = i + 1; j < remainders.size(); ++j) {
        const ColumnSet& a = *remainders[i].second;
        const ColumnSet& b = *remainders[j].second;
        if (std::none_of(a.begin(), a.end(), [&](int c) { return b.count(c) > 0; }))
          add("rail-unreachable", "remainder " + tree_.switch_name(1, remainders[i].first) +
                                      " uses columns " + describe(a) + ", remainder " +
                                      tree_.switch_name(1, remainders[j].first) + " " +
                                      describe(b) + ": no column in common");
      }
  }

  // What check_one_pod found of the leaves it checked: their full leaves' common column set
  // (nullptr: none) and the remainder leaf (-1: none).
  struct Rail {
    const ColumnSet* common = nullptr;
    int remainder = -1;
  };

  Rail check_one_pod(const std::map<int, int>& hosts_per_leaf) {
    Rail out;
    const Counted shape = theorem1(hosts_per_leaf);
    if (!shape.ok) {
      std::ostringstream counts;
      for (const auto& [leaf, n] : hosts_per_leaf) counts << " " << n;
      add("theorem1",
          "hosts per leaf are" + counts.str() + ": all leaves but one must hold the same number");
      return out;
    }
    const ColumnSet* common = nullptr;
    for (const auto& [leaf, n] : hosts_per_leaf) {
      if (leaf == shape.r_unit) continue;
      const ColumnSet& cols = l1_[leaf];
      if (!common) {
        common = &cols;
      } else if (cols != *common) {
        add("theorem2", tree_.switch_name(1, leaf) + " uses up-link columns " + describe(cols) +
                            ", other leaves " + describe(*common));
        return out;
      }
      if (static_cast<int>(cols.size()) < tree_.columns_needed(1, n))
        add("too-few-links", tree_.switch_name(1, leaf) + " has " + std::to_string(n) +
                                 " tenant hosts but " + std::to_string(cols.size()) +
                                 " tenant up-links");
    }
    if (shape.r_unit >= 0 && common) {
      const ColumnSet& r_cols = l1_[shape.r_unit];
      const int r = hosts_per_leaf.at(shape.r_unit);
      if (!std::includes(common->begin(), common->end(), r_cols.begin(), r_cols.end()))
        add("theorem2", "remainder " + tree_.switch_name(1, shape.r_unit) + " uses columns " +
                            describe(r_cols) + ", not a subset of " + describe(*common));
      if (static_cast<int>(r_cols.size()) < tree_.columns_needed(1, r))
        add("too-few-links", tree_.switch_name(1, shape.r_unit) + " has " + std::to_string(r) +
                                 " tenant hosts but " + std::to_string(r_cols.size()) +
                                 " tenant up-links");
    }
    out.common = common;
    out.remainder = shape.r_unit;
    return out;
  }

  // A tenant spanning pods: Theorems 1-2 over all its leaves at once (one R leaf in the whole
  // tenant), then the same theorems on every FBG_2 -- the level-2 switches b of all pods and the
  // top switches above them -- with, per pod, as many flows as the tenant has links into b.
  // The paper's approximated scheme (whole leaves, the same columns on every FBG_2) is the
  // special case where every leaf holds all its up-links.
  void check_across_pods() {
    if (rails_used() > 1)
      check_rails();
    else
      check_one_pod(hosts_per_leaf_);
    for (const auto& [sw, cols] : l2_)
      if (!pods_.count(tree_.pod_of_level2(sw)))
        add("link-off-tenant",
            tree_.switch_name(2, sw) + " holds tenant up-links outside its pods");
    const int p2 = tree_.p(2);
    for (int b = 0; b < tree_.switches_per_pod(2); ++b) {
      std::map<int, int> flows;  // pod -> tenant links from its leaves into level-2 switch b
      for (const auto& [leaf, cols] : l1_)
        for (int c : cols)
          if (c / p2 == b) ++flows[tree_.pod_of_leaf(leaf)];
      for (int pod : pods_) {
        const int sw = tree_.level2_switch(pod, b);
        if (!flows.count(pod) && l2_.count(sw) && !l2_[sw].empty())
          add("link-off-tenant",
              tree_.switch_name(2, sw) + " holds tenant up-links but carries none of its flows");
      }
      if (flows.size() < 2) {
        for (const auto& [pod, n] : flows)
          if (!l2_[tree_.level2_switch(pod, b)].empty())
            add("needless-l2-links", tree_.switch_name(2, tree_.level2_switch(pod, b)) +
                                         " holds up-links no other pod needs");
        continue;
      }
      const Counted shape = theorem1(flows);
      const std::string fbg = "FBG_2 " + std::to_string(b);
      if (!shape.ok) {
        std::ostringstream counts;
        for (const auto& [pod, n] : flows) counts << " " << n;
        add("theorem1-pods", fbg + ": tenant flows per pod are" + counts.str() +
                                 "; all pods but one must carry the same number");
        continue;
      }
      const ColumnSet* common = nullptr;
      for (const auto& [pod, n] : flows) {
        if (pod == shape.r_unit) continue;
        const int sw = tree_.level2_switch(pod, b);
        const ColumnSet& cols = l2_[sw];
        if (!common) {
          common = &cols;
        } else if (cols != *common) {
          add("theorem2-l2", fbg + ": " + tree_.switch_name(2, sw) + " uses columns " +
                                 describe(cols) + ", other pods " + describe(*common));
          break;
        }
        if (static_cast<int>(cols.size()) < tree_.columns_needed(2, n))
          add("too-few-links", tree_.switch_name(2, sw) + " carries " + std::to_string(n) +
                                   " tenant flows on " + std::to_string(cols.size()) + " up-links");
      }
      if (shape.r_unit >= 0 && common) {
        const int sw = tree_.level2_switch(shape.r_unit, b);
        const ColumnSet& r_cols = l2_[sw];
        if (!std::includes(common->begin(), common->end(), r_cols.begin(), r_cols.end()))
          add("theorem2-l2", fbg + ": remainder " + tree_.switch_name(2, sw) + " uses columns " +
                                 describe(r_cols) + ", not a subset of " + describe(*common));
        if (static_cast<int>(r_cols.size()) < tree_.columns_needed(2, flows.at(shape.r_unit)))
          add("too-few-links", tree_.switch_name(2, sw) + " has too few level-2 up-links");
      }
    }
  }

  const FatTree& tree_;
  const TenantView& t_;
  std::map<int, int> hosts_per_leaf_;
  std::set<int> pods_;
  std::map<int, ColumnSet> l1_, l2_;
  std::vector<Violation> found_;
};

// The Simple scheme's guarantee: the tenant alone owns every host slot's leaf (one pod) or every
// pod it spans, with every link inside and above them, so no other traffic can enter.
bool owns_subtrees_exclusively(const FatTree& tree, const TenantView& t,
                               const std::vector<int>& host_owner,
                               const std::vector<int>& link_owner, int self) {
  std::set<int> leaves, pods;
  for (HostId h : t.hosts) {
    leaves.insert(tree.leaf_of_host(h));
    pods.insert(tree.pod_of_leaf(tree.leaf_of_host(h)));
  }
  if (pods.size() > 1) {
    leaves.clear();
    for (int pod : pods)
      for (int i = 0; i < tree.leaves_per_pod(); ++i)
        leaves.insert(pod * tree.leaves_per_pod() + i);
    for (int pod : pods)
      for (int b = 0; b < tree.switches_per_pod(2); ++b)
        for (int c = 0; c < tree.up_columns(2); ++c)
          if (link_owner[tree.l2_link(tree.level2_switch(pod, b), c)] != self) return false;
  }
  for (int leaf : leaves) {
    for (int s = 0; s < tree.hosts_per_leaf(); ++s) {
      const int owner = host_owner[tree.host_at(leaf, s)];
      if (owner != self && owner != -1) return false;
    }
    if (leaves.size() > 1)
      for (int c = 0; c < tree.up_columns(1); ++c)
        if (link_owner[tree.l1_link(leaf, c)] != self) return false;
  }
  return true;
}

std::string link_name(const FatTree& tree, LinkId l) {
  if (l < 0 || l >= tree.total_links()) return "link index " + std::to_string(l);
  const auto lo = tree.link_lower(l);
  return tree.switch_name(lo.level, lo.index) + " port " + std::to_string(lo.port);
}

// Replays the tenant's repairs backwards from the links it routes over: each must have retired
// links the tenant still holds idle and added links on the same switches, and at least one
// retired link must still be faulty.
void check_repairs(const FatTree& tree, const TenantView& t, const std::vector<char>& faulty,
                   std::vector<Violation>& out) {
  std::set<LinkId> active(t.links.begin(), t.links.end());
  std::set<LinkId> idle(t.idle.begin(), t.idle.end());
  for (auto r = t.repairs.rbegin(); r != t.repairs.rend(); ++r) {
    if (r->retired.empty() || r->retired.size() != r->added.size()) {
      out.push_back({t.name, "repair-mismatch",
                     "a repair retires " + std::to_string(r->retired.size()) + " links and adds " +
                         std::to_string(r->added.size())});
      return;
    }
    bool any_faulty = false;
    for (size_t i = 0; i < r->retired.size(); ++i) {
      const LinkId a = r->retired[i], b = r->added[i];
      if (a < 0 || b < 0 || a >= tree.total_links() || b >= tree.total_links() ||
          tree.link_level(a) != tree.link_level(b) || tree.link_switch(a) != tree.link_switch(b)) {
        out.push_back({t.name, "repair-mismatch",
                       link_name(tree, a) + " replaced by " + link_name(tree, b) +
                           ", not a column of the same switch"});
        return;
      }
      if (!active.count(b) || !idle.count(a)) {
        out.push_back({t.name, "repair-mismatch",
                       link_name(tree, a) + " -> " + link_name(tree, b) +
                           ": the tenant does not hold the retired link idle and the added one "
                           "in use"});
        return;
      }
      any_faulty = any_faulty || faulty[a];
    }
    if (!any_faulty)
      out.push_back({t.name, "repair-stale",
                     "no link retired by the repair of " + link_name(tree, r->retired.front()) +
                         " is faulty any more; the repair should have been undone"});
    for (size_t i = 0; i < r->retired.size(); ++i) {
      active.erase(r->added[i]);
      active.insert(r->retired[i]);
      idle.erase(r->retired[i]);
    }
  }
  if (!idle.empty())
    out.push_back({t.name, "idle-mismatch",
                   link_name(tree, *idle.begin()) + " is held idle but no repair retired it"});
}

}  // namespace

std::vector<Violation> check_tenant_shape(const FatTree& tree, const TenantView& tenant) {
  return TenantShape(tree, tenant).check();
}

std::vector<Violation> check_all(const FatTree& tree, const std::vector<TenantView>& tenants,
                                 const std::vector<LinkId>& faulty_links) {
  std::vector<Violation> out;
  std::vector<int> host_owner(tree.num_hosts(), -1);
  std::vector<int> link_owner(tree.total_links(), -1);
  std::set<std::string> names;
  for (size_t i = 0; i < tenants.size(); ++i) {
    const auto& t = tenants[i];
    if (!names.insert(t.name).second) out.push_back({t.name, "duplicate-name", "listed twice"});
    for (HostId h : t.hosts) {
      if (h < 0 || h >= tree.num_hosts()) {
        out.push_back({t.name, "bad-host", "host index " + std::to_string(h)});
        continue;
      }
      if (host_owner[h] >= 0)
        out.push_back({t.name, "host-shared",
                       tree.host_name(h) + " also held by " + tenants[host_owner[h]].name});
      host_owner[h] = static_cast<int>(i);
    }
    for (const auto* list : {&t.links, &t.idle})
      for (LinkId l : *list) {
        if (l < 0 || l >= tree.total_links()) {
          out.push_back({t.name, "bad-link", "link index " + std::to_string(l)});
          continue;
        }
        if (link_owner[l] >= 0) {
          const auto lo = tree.link_lower(l);
          out.push_back({t.name, "link-shared",
                         tree.switch_name(lo.level, lo.index) + " port " + std::to_string(lo.port) +
                             " also held by " + tenants[link_owner[l]].name});
        }
        link_owner[l] = static_cast<int>(i);
      }
  }
  std::vector<char> faulty(tree.total_links(), 0);
  for (LinkId l : faulty_links)
    if (l >= 0 && l < tree.total_links()) faulty[l] = 1;
  for (const auto& t : tenants) check_repairs(tree, t, faulty, out);
  for (size_t i = 0; i < tenants.size(); ++i) {
    const auto& t = tenants[i];
    if (!t.isolated) {
      if (!t.links.empty()) out.push_back({t.name, "bare-metal-links", "holds links"});
      continue;
    }
    auto shape = check_tenant_shape(tree, t);
    if (shape.empty()) continue;
    if (owns_subtrees_exclusively(tree, t, host_owner, link_owner, static_cast<int>(i))) continue;
    out.insert(out.end(), shape.begin(), shape.end());
  }
  return out;
}

std::vector<Violation> check_totals(const FatTree& tree, const std::vector<TenantView>& tenants,
                                    const Totals& claimed) {
  Totals actual;
  for (const auto& t : tenants) {
    actual.hosts += static_cast<int>(t.hosts.size());
    for (LinkId l : t.links) ++(tree.link_level(l) == 1 ? actual.l1_links : actual.l2_links);
  }
  std::vector<Violation> out;
  auto compare = [&](const char* what, int have, int want) {
    if (have != want)
      out.push_back({"", "counts",
                     std::string(what) + ": state says " + std::to_string(want) +
                         ", tenants hold " + std::to_string(have)});
  };
  compare("allocated hosts", actual.hosts, claimed.hosts);
  compare("allocated level-1 links", actual.l1_links, claimed.l1_links);
  compare("allocated level-2 links", actual.l2_links, claimed.l2_links);
  return out;
}

std::vector<Violation> check_claims(const FatTree& tree, const std::vector<TenantView>& tenants,
                                    const StateClaims& claims) {
  std::vector<Violation> out;
  if (static_cast<int>(claims.host_owner.size()) != tree.num_hosts() ||
      static_cast<int>(claims.link_owner.size()) != tree.total_links()) {
    out.push_back({"", "counts", "the state's owner tables do not match the tree"});
    return out;
  }
  std::vector<std::string> host_want(tree.num_hosts()), link_want(tree.total_links());
  for (const auto& t : tenants) {
    for (HostId h : t.hosts) {
      if (h < 0 || h >= tree.num_hosts()) continue;
      host_want[h] = t.name;
      if (claims.host_owner[h] != t.name)
        out.push_back(
            {t.name, "reserved-released",
             tree.host_name(h) + " is the tenant's but the state shows it " +
                 (claims.host_owner[h].empty() ? "free" : "held by " + claims.host_owner[h])});
    }
    for (const auto* list : {&t.links, &t.idle})
      for (LinkId l : *list) {
        if (l < 0 || l >= tree.total_links()) continue;
        link_want[l] = t.name;
        if (claims.link_owner[l] != t.name)
          out.push_back(
              {t.name, "reserved-released",
               link_name(tree, l) + " is the tenant's but the state shows it " +
                   (claims.link_owner[l].empty() ? "free" : "held by " + claims.link_owner[l])});
      }
  }
  for (HostId h = 0; h < tree.num_hosts(); ++h)
    if (!claims.host_owner[h].empty() && claims.host_owner[h][0] != '@' && host_want[h].empty())
      out.push_back(
          {claims.host_owner[h], "state-phantom",
           "the state holds " + tree.host_name(h) + " for a tenant that does not list it"});
  for (LinkId l = 0; l < tree.total_links(); ++l)
    if (!claims.link_owner[l].empty() && link_want[l].empty())
      out.push_back(
          {claims.link_owner[l], "state-phantom",
           "the state holds " + link_name(tree, l) + " for a tenant that does not list it"});
  return out;
}

std::string to_string(const Violation& v) {
  return (v.tenant.empty() ? "" : "tenant '" + v.tenant + "': ") + v.rule + ": " + v.detail;
}

}  // namespace laas::check

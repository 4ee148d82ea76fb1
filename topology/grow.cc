// Staged build-out: the recorded layout grown by switches cabled to it since.
#include <algorithm>
#include <map>
#include <set>

#include "topology/recognize.h"
#include "topology/recognizer.h"

namespace laas::topology {
namespace {

// A switch's structural position: level 1 (pod, leaf in pod), level 2 (pod, plane b2),
// level 3 (plane b2, top switch in plane).
struct Pos {
  int a = 0, b = 0;
};

Pos pos_of(const FatTree& t, int level, int i) {
  if (level == 1) return {i / t.m(2), i % t.m(2)};
  if (level == 2) return {i / t.switches_per_pod(2), i % t.switches_per_pod(2)};
  return {i / t.w(3), i % t.w(3)};
}

// R -> G index maps of one kind, with the positions the recorded layout holds.
struct Assign {
  std::vector<int> to;        // [R index] -> G index, -1 unassigned
  std::vector<bool> present;  // [R index] holds a present switch
  std::set<int> occupied;     // G indices the recorded layout saw a switch in

  explicit Assign(int n) : to(n, -1), present(n, false) {}
  bool set(int r, int g) {
    if (to[r] >= 0 && to[r] != g) return false;
    to[r] = g;
    return true;
  }
  // Every present R index gets a G index; false when two R indices share one.
  bool finish() {
    std::set<int> used;
    for (int g : to)
      if (g >= 0 && !used.insert(g).second) return false;
    for (size_t r = 0; r < to.size(); ++r) {
      if (to[r] >= 0 || !present[r]) continue;
      int g = 0;
      while (used.count(g) || occupied.count(g)) ++g;
      to[r] = g;
      used.insert(g);
    }
    return true;
  }
  int size() const {  // G indices needed
    int n = 0;
    for (int g : to) n = std::max(n, g + 1);
    return n;
  }
  int inverse(int g) const {
    for (size_t r = 0; r < to.size(); ++r)
      if (to[r] == g) return static_cast<int>(r);
    return -1;
  }
};

// Model port mp of a level-l switch of tree t as (up?, parent position or child, parallel).
struct PortRole {
  bool up = false;
  int who = 0, j = 0;
};

PortRole role_of(const FatTree& t, int l, int mp) {
  const int up = t.up_columns(l);
  if (mp <= up) {
    const int p = t.p(l + 1);
    return {true, (mp - 1) / p, (mp - 1) % p};
  }
  const int d = mp - 1 - up;
  return {false, d / t.p(l), d % t.p(l)};
}

// The model port of `t` with that role, 0 when t has none.
int port_for(const FatTree& t, int l, const PortRole& r) {
  if (r.who < 0) return 0;
  if (r.up) {
    if (l >= t.height() || r.who >= t.w(l + 1) || r.j >= t.p(l + 1)) return 0;
    return t.up_port(l, r.who * t.p(l + 1) + r.j);
  }
  if (r.who >= t.m(l) || r.j >= t.p(l)) return 0;
  return t.down_port(l, r.who, r.j);
}

// grow_layout's working set: the recorded tree (G's numbering, "old"), the tree the cabling
// shows (R, `bigger`), and the maps of R's pods, planes, leaf and top positions onto G's.
class Grower {
 public:
  Grower(const Layout& recorded, const Recognition& bigger, const Fabric& fabric)
      : recorded_(recorded),
        fabric_(fabric),
        old_(FatTree::parse(recorded.spec)),
        rt_(*bigger.tree),
        re_(bigger.embedding),
        h_(old_.height()),
        pods_r_(rt_.num_pods()),
        m2_r_(rt_.m(2)),
        w2_r_(rt_.switches_per_pod(2)),
        w3_r_(rt_.height() == 3 ? rt_.w(3) : 1),
        pod_(pods_r_),
        plane_(w2_r_),
        leafpos_(pods_r_, Assign(m2_r_)),
        toppos_(w2_r_, Assign(w3_r_)) {}

  // Why the cabling's tree is not a growth of the recorded one, or "".
  std::string match();
  // The grown shape: the recorded one, widened where new switches need room.
  FatTreeSpec grown_spec() const;
  Layout layout(const FatTreeSpec& spec, const FatTree& gt) const;

 private:
  std::string match_recorded_switches();
  std::string place_new_positions();
  int r_index(int l, const Pos& g) const;
  int old_index(int l, const Pos& g) const;
  PortRole r_role(int l, const Pos& g, PortRole r) const;
  LayoutSwitch layout_switch(const FatTree& gt, int l, int i) const;

  const Layout& recorded_;
  const Fabric& fabric_;
  const FatTree old_;
  const FatTree& rt_;
  const Embedding& re_;
  const int h_;
  const int pods_r_, m2_r_, w2_r_, w3_r_;
  Assign pod_, plane_;
  std::vector<Assign> leafpos_, toppos_;
  std::vector<int> added_;  // [level] switches the recorded layout does not know
};

std::string Grower::match() {
  const int h = h_;
  if (rt_.height() != h)
    return "the cabling shows a " + std::to_string(rt_.height()) + "-level tree, " +
           "the recorded one has " + std::to_string(h) + " levels";
  if (static_cast<int>(recorded_.switches.size()) != h) return "the layout is malformed";
  std::string why = match_recorded_switches();
  if (why.empty()) why = place_new_positions();
  if (why.empty() && added_[1] + added_[2] + (h == 3 ? added_[3] : 0) == 0)
    why = "no switch outside the recorded tree is part of the cabling's tree";
  return why;
}

// Every recorded switch the cabling's tree places must be at the same level, in the same pod
// and plane, at the same position relative to the other recorded switches.
std::string Grower::match_recorded_switches() {
  const int h = h_;
  std::map<Guid, std::pair<int, int>> old_at;
  for (int l = 1; l <= h; ++l)
    for (int i = 0; i < static_cast<int>(recorded_.switches[l - 1].size()); ++i)
      if (recorded_.switches[l - 1][i].guid) old_at[recorded_.switches[l - 1][i].guid] = {l, i};
  // Positions the recorded layout saw a switch in.
  for (int l = 1; l <= h; ++l)
    for (int i = 0; i < old_.num_switches(l); ++i) {
      if (!recorded_.switches[l - 1][i].guid) continue;
      const Pos p = pos_of(old_, l, i);
      if (l == 1) pod_.occupied.insert(p.a);
      if (l == 2) pod_.occupied.insert(p.a), plane_.occupied.insert(p.b);
      if (l == 3) plane_.occupied.insert(p.a);
    }
  added_.assign(h + 1, 0);
  bool fits = true;
  std::string what;
  for (int l = 1; l <= h && fits; ++l)
    for (int i = 0; i < rt_.num_switches(l) && fits; ++i) {
      const int node = re_.switch_node[l - 1][i];
      if (node < 0) continue;
      const Pos pr = pos_of(rt_, l, i);
      if (l == 1) pod_.present[pr.a] = true, leafpos_[pr.a].present[pr.b] = true;
      if (l == 2) pod_.present[pr.a] = true, plane_.present[pr.b] = true;
      if (l == 3) plane_.present[pr.a] = true, toppos_[pr.a].present[pr.b] = true;
      auto it = old_at.find(fabric_.nodes[node].guid);
      if (it == old_at.end()) {
        ++added_[l];
        continue;
      }
      const auto [lo, io] = it->second;
      what = "'" + fabric_.nodes[node].name + "'";
      if (lo != l) {
        fits = false;
        what += " was at level " + std::to_string(lo) + ", the cabling puts it at level " +
                std::to_string(l);
        break;
      }
      const Pos po = pos_of(old_, l, io);
      if (l == 1) fits = pod_.set(pr.a, po.a) && leafpos_[pr.a].set(pr.b, po.b);
      if (l == 2) fits = pod_.set(pr.a, po.a) && plane_.set(pr.b, po.b);
      if (l == 3) fits = plane_.set(pr.a, po.a) && toppos_[pr.a].set(pr.b, po.b);
      if (!fits) what += " is cabled to other recorded switches than it was";
    }
  if (!fits) return what + " (a recabling is not a growth)";
  if (!pod_.finish() || !plane_.finish())
    return "recorded pods or planes are joined differently than recorded";
  return "";
}

// Leaves within each pod, top switches within each plane: positions the recorded layout
// never saw a switch in first, then after the recorded ones.
std::string Grower::place_new_positions() {
  for (int kr = 0; kr < pods_r_; ++kr) {
    const int kg = pod_.to[kr];
    if (kg < 0) continue;
    for (int x = 0; x < old_.m(2); ++x)
      if (kg < old_.num_pods() && recorded_.switches[0][kg * old_.m(2) + x].guid)
        leafpos_[kr].occupied.insert(x);
    if (!leafpos_[kr].finish()) return "recorded leaves are in other pods than recorded";
  }
  for (int br = 0; br < w2_r_ && h_ == 3; ++br) {
    const int bg = plane_.to[br];
    if (bg < 0) continue;
    for (int x = 0; x < old_.w(3); ++x)
      if (bg < old_.switches_per_pod(2) && recorded_.switches[2][bg * old_.w(3) + x].guid)
        toppos_[br].occupied.insert(x);
    if (!toppos_[br].finish()) return "recorded top switches are in other planes";
  }
  return "";
}

FatTreeSpec Grower::grown_spec() const {
  FatTreeSpec spec = old_.spec();
  auto& lv = spec.levels;
  lv[0].children = std::max(old_.m(1), rt_.m(1));
  int m2 = old_.m(2);
  for (const auto& a : leafpos_) m2 = std::max(m2, a.size());
  lv[1].children = m2;
  lv[1].parents = std::max(old_.switches_per_pod(2), plane_.size());
  lv[1].parallel = std::max(old_.p(2), rt_.p(2));
  if (h_ == 3) {
    lv[2].children = std::max(old_.num_pods(), pod_.size());
    int w3 = old_.w(3);
    for (const auto& a : toppos_) w3 = std::max(w3, a.size());
    lv[2].parents = w3;
    lv[2].parallel = std::max(old_.p(3), rt_.p(3));
  }
  return spec;
}

// G position -> R index (-1: none).
int Grower::r_index(int l, const Pos& g) const {
  if (l == 1) {
    const int kr = pod_.inverse(g.a);
    const int x = kr < 0 ? -1 : leafpos_[kr].inverse(g.b);
    return x < 0 ? -1 : kr * m2_r_ + x;
  }
  if (l == 2) {
    const int kr = pod_.inverse(g.a), br = plane_.inverse(g.b);
    return kr < 0 || br < 0 ? -1 : kr * w2_r_ + br;
  }
  const int br = plane_.inverse(g.a);
  const int x = br < 0 ? -1 : toppos_[br].inverse(g.b);
  return x < 0 ? -1 : br * w3_r_ + x;
}

// G position -> recorded index (-1: none).
int Grower::old_index(int l, const Pos& g) const {
  if (l == 1) return g.a < old_.num_pods() && g.b < old_.m(2) ? g.a * old_.m(2) + g.b : -1;
  if (l == 2)
    return g.a < old_.num_pods() && g.b < old_.switches_per_pod(2)
               ? g.a * old_.switches_per_pod(2) + g.b
               : -1;
  return g.a < old_.switches_per_pod(2) && g.b < old_.w(3) ? g.a * old_.w(3) + g.b : -1;
}

// A G port role in R's numbering: parents and children renamed through the maps.
PortRole Grower::r_role(int l, const Pos& g, PortRole r) const {
  if (r.up) {
    if (l == 1) r.who = plane_.inverse(r.who);
    if (l == 2) {
      const int br = plane_.inverse(g.b);
      r.who = br < 0 ? -1 : toppos_[br].inverse(r.who);
    }
  } else {
    if (l == 2) {
      const int kr = pod_.inverse(g.a);
      r.who = kr < 0 ? -1 : leafpos_[kr].inverse(r.who);
    }
    if (l == 3) r.who = pod_.inverse(r.who);
  }
  return r;
}

// Grown switch (l, i): the recorded row where the recorded layout saw a switch there, else
// the cabling's; its ports the recorded ones first, then the cabling's, then free ones.
LayoutSwitch Grower::layout_switch(const FatTree& gt, int l, int i) const {
  const Pos g = pos_of(gt, l, i);
  const int io = old_index(l, g);
  const int ir = r_index(l, g);
  const LayoutSwitch* rec = io >= 0 ? &recorded_.switches[l - 1][io] : nullptr;
  const int node = ir >= 0 ? re_.switch_node[l - 1][ir] : -1;
  const bool seen = rec && rec->guid;  // the recorded layout's row is authoritative
  LayoutSwitch s;
  s.guid = seen ? rec->guid : node >= 0 ? fabric_.nodes[node].guid : 0;
  s.name = seen || node < 0 ? (rec ? rec->name : "") : fabric_.nodes[node].name;
  s.ports.assign(gt.num_ports(l) + 1, 0);
  std::set<int> taken;
  for (int pass = 0; pass < 2; ++pass)  // recorded ports first, then the cabling's
    for (int mp = 1; mp <= gt.num_ports(l); ++mp) {
      if (s.ports[mp]) continue;
      const PortRole role = role_of(gt, l, mp);
      int phys = 0;
      const bool from_old = (pass == 0) == (seen || node < 0);
      if (from_old && rec) {
        const int op = port_for(old_, l, role);
        if (op > 0 && op < static_cast<int>(rec->ports.size())) phys = rec->ports[op];
      } else if (!from_old && node >= 0) {
        const int rp = port_for(rt_, l, r_role(l, g, role));
        if (rp > 0) phys = re_.port_map[l - 1][ir][rp];
      }
      if (phys > 0 && taken.insert(phys).second) s.ports[mp] = phys;
    }
  // Model ports neither knows: a free physical port (an absent cable).
  const int present = node >= 0 ? node : -1;
  for (int mp = 1; mp <= gt.num_ports(l); ++mp) {
    if (s.ports[mp]) continue;
    for (int p = 1; p <= 254; ++p) {
      if (taken.count(p)) continue;
      if (present >= 0 && p < static_cast<int>(fabric_.nodes[present].ports.size()) &&
          fabric_.nodes[present].ports[p].peer_node >= 0)
        continue;
      s.ports[mp] = p;
      taken.insert(p);
      break;
    }
  }
  return s;
}

Layout Grower::layout(const FatTreeSpec& spec, const FatTree& gt) const {
  Layout out;
  out.spec = spec.text();
  out.switches.resize(h_);
  for (int l = 1; l <= h_; ++l)
    for (int i = 0; i < gt.num_switches(l); ++i)
      out.switches[l - 1].push_back(layout_switch(gt, l, i));
  out.hosts.resize(gt.num_hosts());
  for (HostId hg = 0; hg < gt.num_hosts(); ++hg) {
    const int leaf = gt.leaf_of_host(hg), slot = gt.slot_of_host(hg);
    const int lo = old_index(1, pos_of(gt, 1, leaf));
    if (lo >= 0 && slot < old_.m(1) &&
        recorded_.hosts.size() == static_cast<size_t>(old_.num_hosts()))
      out.hosts[hg] = recorded_.hosts[old_.host_at(lo, slot)];
  }
  return out;
}

}  // namespace

std::optional<Layout> grow_layout(const Layout& recorded, const Recognition& bigger,
                                  const Fabric& fabric, std::string* why) {
  auto refuse = [&](std::string s) -> std::optional<Layout> {
    if (why) *why = std::move(s);
    return std::nullopt;
  };
  if (!bigger.ok()) return refuse("the cabling is not a tree: " + bigger.error);
  Grower grower(recorded, bigger, fabric);
  if (std::string bad = grower.match(); !bad.empty()) return refuse(bad);
  const FatTreeSpec spec = grower.grown_spec();
  std::optional<FatTree> grown;
  try {
    grown.emplace(spec);
  } catch (const SpecError& e) {
    return refuse("the grown tree " + spec.text() + " is not supported: " + e.what());
  }
  return grower.layout(spec, *grown);
}

std::string growth_summary(const Layout& from, const Layout& to) {
  std::set<Guid> known;
  for (const auto& level : from.switches)
    for (const auto& s : level)
      if (s.guid) known.insert(s.guid);
  const int h = static_cast<int>(to.switches.size());
  std::vector<int> added(h + 1, 0);
  for (int l = 1; l <= h; ++l)
    for (const auto& s : to.switches[l - 1])
      if (s.guid && !known.count(s.guid)) ++added[l];
  auto part = [](int n, const char* one, const char* many) {
    return "+" + std::to_string(n) + " " + (n == 1 ? one : many);
  };
  std::string out = from.spec == to.spec
                        ? "filled absent parts of the intended tree " + to.spec + ":"
                        : "grew the intended tree from " + from.spec + " to " + to.spec + ":";
  std::string sep = " ";
  auto add = [&](int n, const char* one, const char* many) {
    if (!n) return;
    out += sep + part(n, one, many);
    sep = ", ";
  };
  add(added[1], "leaf", "leaves");
  if (h == 2) add(added[2], "spine", "spines");
  if (h == 3) {
    const FatTree a(FatTree::parse(from.spec)), b(FatTree::parse(to.spec));
    add(b.num_pods() - a.num_pods(), "pod", "pods");
    add(added[2], "level-2 switch", "level-2 switches");
    add(added[3], "top switch", "top switches");
  }
  if (sep == " ") out += " no new switch";
  return out;
}

namespace recognition {

bool grow(const Layout& recorded, const Fabric& fabric, const RecognizeOptions& options,
          const FatTreeSpec* declared, Recognition& r) {
  const auto& nm = r.embedding.node_model;
  std::set<int> outside;
  for (const auto& c : r.embedding.extra_cables) {
    const bool a = fabric.nodes[c.node].is_switch, b = fabric.nodes[c.peer].is_switch;
    if (a && b && nm[c.node].first >= 1 && nm[c.peer].first < 0) outside.insert(c.peer);
    if (a && b && nm[c.peer].first >= 1 && nm[c.node].first < 0) outside.insert(c.node);
  }
  if (outside.empty()) return false;
  const Recognition bigger = Recognizer(fabric, declared).run(options.sm_port_guid);
  std::string why;
  std::optional<Layout> grown = grow_layout(recorded, bigger, fabric, &why);
  Recognition g;
  if (grown) {
    try {
      why = embed_layout(*grown, fabric, &g);
    } catch (const SpecError& e) {
      why = e.what();
    }
    if (why.empty() && declared && grown->spec != declared->text())
      why = "it would be " + grown->spec + ", larger than laas.yaml's topology " + declared->text();
    int joined = 0;
    for (int n : outside) joined += why.empty() && g.embedding.node_model[n].first >= 1;
    if (why.empty() && joined == 0) why = "none of them joins the tree";
    if (!why.empty()) why = "the grown tree " + grown->spec + " does not fit: " + why;
  }
  if (!why.empty()) {
    r.source_note += "; " + std::to_string(outside.size()) +
                     " switch(es) cabled to the tree are not a growth of it: " + why;
    return false;
  }
  g.source = TreeSource::kGrown;
  g.growth = growth_summary(recorded, *grown);
  g.source_note = "intended tree " + g.tree->spec().text() + " grown from the recorded layout (" +
                  recorded.spec + ")";
  g.grown = std::move(grown);
  find_sm(fabric, options.sm_port_guid, g);
  r = std::move(g);
  return true;
}

}  // namespace recognition
}  // namespace laas::topology

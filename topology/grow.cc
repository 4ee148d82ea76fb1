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

}  // namespace

std::optional<Layout> grow_layout(const Layout& recorded, const Recognition& bigger,
                                  const Fabric& fabric, std::string* why) {
  auto refuse = [&](std::string s) -> std::optional<Layout> {
    if (why) *why = std::move(s);
    return std::nullopt;
  };
  if (!bigger.ok()) return refuse("the cabling is not a tree: " + bigger.error);
  const FatTree old(FatTree::parse(recorded.spec));
  const FatTree& rt = *bigger.tree;
  const Embedding& re = bigger.embedding;
  const int h = old.height();
  if (rt.height() != h)
    return refuse("the cabling shows a " + std::to_string(rt.height()) + "-level tree, " +
                  "the recorded one has " + std::to_string(h) + " levels");
  if (static_cast<int>(recorded.switches.size()) != h) return refuse("the layout is malformed");
  std::map<Guid, std::pair<int, int>> old_at;
  for (int l = 1; l <= h; ++l)
    for (int i = 0; i < static_cast<int>(recorded.switches[l - 1].size()); ++i)
      if (recorded.switches[l - 1][i].guid) old_at[recorded.switches[l - 1][i].guid] = {l, i};

  const int pods_r = rt.num_pods(), m2_r = rt.m(2), w2_r = rt.switches_per_pod(2);
  const int w3_r = h == 3 ? rt.w(3) : 1;
  Assign pod(pods_r), plane(w2_r);
  std::vector<Assign> leafpos(pods_r, Assign(m2_r)), toppos(w2_r, Assign(w3_r));
  // Positions the recorded layout saw a switch in.
  for (int l = 1; l <= h; ++l)
    for (int i = 0; i < old.num_switches(l); ++i) {
      if (!recorded.switches[l - 1][i].guid) continue;
      const Pos p = pos_of(old, l, i);
      if (l == 1) pod.occupied.insert(p.a);
      if (l == 2) pod.occupied.insert(p.a), plane.occupied.insert(p.b);
      if (l == 3) plane.occupied.insert(p.a);
    }
  std::vector<int> added(h + 1, 0);
  bool fits = true;
  std::string what;
  for (int l = 1; l <= h && fits; ++l)
    for (int i = 0; i < rt.num_switches(l) && fits; ++i) {
      const int node = re.switch_node[l - 1][i];
      if (node < 0) continue;
      const Pos pr = pos_of(rt, l, i);
      if (l == 1) pod.present[pr.a] = true, leafpos[pr.a].present[pr.b] = true;
      if (l == 2) pod.present[pr.a] = true, plane.present[pr.b] = true;
      if (l == 3) plane.present[pr.a] = true, toppos[pr.a].present[pr.b] = true;
      auto it = old_at.find(fabric.nodes[node].guid);
      if (it == old_at.end()) {
        ++added[l];
        continue;
      }
      const auto [lo, io] = it->second;
      what = "'" + fabric.nodes[node].name + "'";
      if (lo != l) {
        fits = false;
        what += " was at level " + std::to_string(lo) + ", the cabling puts it at level " +
                std::to_string(l);
        break;
      }
      const Pos po = pos_of(old, l, io);
      if (l == 1) fits = pod.set(pr.a, po.a) && leafpos[pr.a].set(pr.b, po.b);
      if (l == 2) fits = pod.set(pr.a, po.a) && plane.set(pr.b, po.b);
      if (l == 3) fits = plane.set(pr.a, po.a) && toppos[pr.a].set(pr.b, po.b);
      if (!fits) what += " is cabled to other recorded switches than it was";
    }
  if (!fits) return refuse(what + " (a recabling is not a growth)");
  if (!pod.finish() || !plane.finish())
    return refuse("recorded pods or planes are joined differently than recorded");
  // Leaves within each pod, top switches within each plane: positions the recorded layout
  // never saw a switch in first, then after the recorded ones.
  for (int kr = 0; kr < pods_r; ++kr) {
    const int kg = pod.to[kr];
    if (kg < 0) continue;
    for (int x = 0; x < old.m(2); ++x)
      if (kg < old.num_pods() && recorded.switches[0][kg * old.m(2) + x].guid)
        leafpos[kr].occupied.insert(x);
    if (!leafpos[kr].finish()) return refuse("recorded leaves are in other pods than recorded");
  }
  for (int br = 0; br < w2_r && h == 3; ++br) {
    const int bg = plane.to[br];
    if (bg < 0) continue;
    for (int x = 0; x < old.w(3); ++x)
      if (bg < old.switches_per_pod(2) && recorded.switches[2][bg * old.w(3) + x].guid)
        toppos[br].occupied.insert(x);
    if (!toppos[br].finish()) return refuse("recorded top switches are in other planes");
  }
  if (added[1] + added[2] + (h == 3 ? added[3] : 0) == 0)
    return refuse("no switch outside the recorded tree is part of the cabling's tree");

  // The grown shape: the recorded one, widened where new switches need room.
  FatTreeSpec spec = old.spec();
  auto& lv = spec.levels;
  lv[0].children = std::max(old.m(1), rt.m(1));
  int m2 = old.m(2);
  for (const auto& a : leafpos) m2 = std::max(m2, a.size());
  lv[1].children = m2;
  lv[1].parents = std::max(old.switches_per_pod(2), plane.size());
  lv[1].parallel = std::max(old.p(2), rt.p(2));
  if (h == 3) {
    lv[2].children = std::max(old.num_pods(), pod.size());
    int w3 = old.w(3);
    for (const auto& a : toppos) w3 = std::max(w3, a.size());
    lv[2].parents = w3;
    lv[2].parallel = std::max(old.p(3), rt.p(3));
  }
  std::optional<FatTree> grown;
  try {
    grown.emplace(spec);
  } catch (const SpecError& e) {
    return refuse("the grown tree " + spec.text() + " is not supported: " + e.what());
  }
  const FatTree& gt = *grown;

  // G position -> R index and recorded index (-1: none).
  auto r_index = [&](int l, const Pos& g) {
    if (l == 1) {
      const int kr = pod.inverse(g.a);
      const int x = kr < 0 ? -1 : leafpos[kr].inverse(g.b);
      return x < 0 ? -1 : kr * m2_r + x;
    }
    if (l == 2) {
      const int kr = pod.inverse(g.a), br = plane.inverse(g.b);
      return kr < 0 || br < 0 ? -1 : kr * w2_r + br;
    }
    const int br = plane.inverse(g.a);
    const int x = br < 0 ? -1 : toppos[br].inverse(g.b);
    return x < 0 ? -1 : br * w3_r + x;
  };
  auto old_index = [&](int l, const Pos& g) {
    if (l == 1) return g.a < old.num_pods() && g.b < old.m(2) ? g.a * old.m(2) + g.b : -1;
    if (l == 2)
      return g.a < old.num_pods() && g.b < old.switches_per_pod(2)
                 ? g.a * old.switches_per_pod(2) + g.b
                 : -1;
    return g.a < old.switches_per_pod(2) && g.b < old.w(3) ? g.a * old.w(3) + g.b : -1;
  };
  // A G port role in R's numbering: parents and children renamed through the maps.
  auto r_role = [&](int l, const Pos& g, PortRole r) {
    if (r.up) {
      if (l == 1) r.who = plane.inverse(r.who);
      if (l == 2) {
        const int br = plane.inverse(g.b);
        r.who = br < 0 ? -1 : toppos[br].inverse(r.who);
      }
    } else {
      if (l == 2) {
        const int kr = pod.inverse(g.a);
        r.who = kr < 0 ? -1 : leafpos[kr].inverse(r.who);
      }
      if (l == 3) r.who = pod.inverse(r.who);
    }
    return r;
  };

  Layout out;
  out.spec = spec.text();
  out.switches.resize(h);
  for (int l = 1; l <= h; ++l)
    for (int i = 0; i < gt.num_switches(l); ++i) {
      const Pos g = pos_of(gt, l, i);
      const int io = old_index(l, g);
      const int ir = r_index(l, g);
      const LayoutSwitch* rec = io >= 0 ? &recorded.switches[l - 1][io] : nullptr;
      const int node = ir >= 0 ? re.switch_node[l - 1][ir] : -1;
      const bool seen = rec && rec->guid;  // the recorded layout's row is authoritative
      LayoutSwitch s;
      s.guid = seen ? rec->guid : node >= 0 ? fabric.nodes[node].guid : 0;
      s.name = seen || node < 0 ? (rec ? rec->name : "") : fabric.nodes[node].name;
      s.ports.assign(gt.num_ports(l) + 1, 0);
      std::set<int> taken;
      for (int pass = 0; pass < 2; ++pass)  // recorded ports first, then the cabling's
        for (int mp = 1; mp <= gt.num_ports(l); ++mp) {
          if (s.ports[mp]) continue;
          const PortRole role = role_of(gt, l, mp);
          int phys = 0;
          const bool from_old = (pass == 0) == (seen || node < 0);
          if (from_old && rec) {
            const int op = port_for(old, l, role);
            if (op > 0 && op < static_cast<int>(rec->ports.size())) phys = rec->ports[op];
          } else if (!from_old && node >= 0) {
            const int rp = port_for(rt, l, r_role(l, g, role));
            if (rp > 0) phys = re.port_map[l - 1][ir][rp];
          }
          if (phys > 0 && taken.insert(phys).second) s.ports[mp] = phys;
        }
      // Model ports neither knows: a free physical port (an absent cable).
      const int present = node >= 0 ? node : -1;
      for (int mp = 1; mp <= gt.num_ports(l); ++mp) {
        if (s.ports[mp]) continue;
        for (int p = 1; p <= 254; ++p) {
          if (taken.count(p)) continue;
          if (present >= 0 && p < static_cast<int>(fabric.nodes[present].ports.size()) &&
              fabric.nodes[present].ports[p].peer_node >= 0)
            continue;
          s.ports[mp] = p;
          taken.insert(p);
          break;
        }
      }
      out.switches[l - 1].push_back(std::move(s));
    }
  out.hosts.resize(gt.num_hosts());
  for (HostId hg = 0; hg < gt.num_hosts(); ++hg) {
    const int leaf = gt.leaf_of_host(hg), slot = gt.slot_of_host(hg);
    const int lo = old_index(1, pos_of(gt, 1, leaf));
    if (lo >= 0 && slot < old.m(1) && recorded.hosts.size() == static_cast<size_t>(old.num_hosts()))
      out.hosts[hg] = recorded.hosts[old.host_at(lo, slot)];
  }
  return out;
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

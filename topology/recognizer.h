// The steps of recognition (recognize.h), shared by its units: reading the cabling
// (Recognizer: recognize_cabling.cc, recognize_ports.cc), placing a tree on the fabric and
// listing what lies outside it (embed.cc), and growing a recorded tree (grow.cc).
// Internal to topology/.
#pragma once

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "topology/recognize.h"

namespace laas::topology::recognition {

// "switch 'name' (0x...)" or "CA ...", for messages.
std::string describe(const Fabric& f, int node);
// Whether a cable joins (a, pa) and (b, pb).
bool cabled(const Fabric& f, int a, int pa, int b, int pb);
// The absent parts of an embedding whose switch_node, port_map and present hosts are set:
// a switch without a single cable is absent too (OpenSM may still list it for a sweep), a
// link is missing unless its cable joins the two mapped ports, a host unless it is mapped.
void finish_absent(const FatTree& tree, const Fabric& f, Embedding& emb);
// Lists the cables the tree does not use: adapters on tree switches are attached
// hosts, the rest extra cables. A switch cabled to itself is refused: the error, else "".
std::string find_outside(const FatTree& tree, const Fabric& f, Embedding& emb,
                         bool set_aside_loops = false);
// The SM's node (and model host) in `r`, by its port GUID (0: unknown).
void find_sm(const Fabric& f, Guid sm_port_guid, Recognition& r);

// The fat-tree the cabling shows (or the declared spec holds), in phases: classify the nodes,
// rank the switch levels, find the pods, order the level-2 and top switches by plane, fit the
// declared shape, then map model ports to physical ones (build_maps).
class Recognizer {
 public:
  Recognizer(const Fabric& f, const FatTreeSpec* target)
      : f_(f), n_(static_cast<int>(f.nodes.size())), target_(target) {}

  Recognition run(Guid sm_port_guid);

  // The physical port most switches of a level use for a model port: [level-1][model port],
  // 0 where none.
  using PortTemplates = std::vector<std::vector<int>>;

 private:
  // Every step returns false after setting error_.
  bool classify();
  bool rank_levels();
  bool find_pods();
  void connect_pods(std::vector<int>& lonely);
  bool demote_leaves_at_top();
  bool place_lonely_leaves(const std::vector<int>& lonely);
  bool order_level2_and_top();
  bool assign_planes(std::map<int, int>& group, std::map<int, int>& b2_of, int& planes);
  bool order_pods_by_plane(const std::map<int, int>& b2_of);
  bool group_tops(std::map<int, int>& group);
  bool fit_target();
  void build_maps(const FatTree& tree, Embedding& emb);
  // build_maps' steps (recognize_ports.cc). A port map row is [model port] -> physical port.
  void place_switches(const FatTree& tree, Embedding& emb) const;
  void map_full_leaves(const FatTree& tree, Embedding& emb,
                       std::vector<std::vector<int>>& host_ports) const;
  void map_parallel_group(const FatTree& tree, Embedding& emb, int l, int i, int b,
                          const PortTemplates* tmpl) const;
  void map_partial_leaves(const FatTree& tree, Embedding& emb,
                          const std::vector<std::vector<int>>& host_ports,
                          const PortTemplates& tmpl) const;
  void fill_unknown_ports(const FatTree& tree, Embedding& emb, const PortTemplates& tmpl) const;
  void place_hosts(const FatTree& tree, Embedding& emb) const;
  bool fail(std::string why) {
    error_ = std::move(why);
    return false;
  }
  bool key_less(int a, int b) const {
    const auto& x = f_.nodes[a];
    const auto& y = f_.nodes[b];
    if (x.name != y.name) return natural_less(x.name, y.name);
    return x.guid < y.guid;
  }
  void sort_by_key(std::vector<int>& v) const {
    std::sort(v.begin(), v.end(), [this](int a, int b) { return key_less(a, b); });
  }
  // Physical ports of `node` cabled to `peer`, ascending.
  std::vector<int> ports_to(int node, int peer) const {
    std::vector<int> out;
    const auto& ports = f_.nodes[node].ports;
    for (int p = 1; p < static_cast<int>(ports.size()); ++p)
      if (ports[p].peer_node == peer && !ignored_.count({node, p})) out.push_back(p);
    return out;
  }
  std::vector<int> switch_peers(int node) const {
    std::set<int> s;
    const auto& ports = f_.nodes[node].ports;
    for (int p = 1; p < static_cast<int>(ports.size()); ++p) {
      const int q = ports[p].peer_node;
      if (q >= 0 && f_.nodes[q].is_switch && !ignored_.count({node, p})) s.insert(q);
    }
    return {s.begin(), s.end()};
  }
  // A cable outside the tree: every step after ranking ignores it (find_outside lists it).
  void ignore_cables(int a, int b) {
    for (int p : ports_to(a, b)) {
      ignored_.insert({a, p});
      ignored_.insert({b, f_.nodes[a].ports[p].peer_port});
    }
  }

  const Fabric& f_;
  const int n_;
  const FatTreeSpec* target_;  // declared shape, or null for the largest consistent tree
  std::string error_;
  std::set<std::pair<int, int>> ignored_;   // (node, port) ends of cables outside the tree
  std::vector<int> level_;                  // per node: 0 CA or off-tree, 1.. switch level
  std::vector<std::vector<int>> by_level_;  // [level-1] -> nodes
  std::vector<std::vector<int>> hosts_of_;  // per node (leaves): CAs
  int height_ = 0;
  int m1_ = 0, m2_ = 0, w2_ = 0;
  // Pods: leaves and level-2 switches, ordered; -1 marks an absent switch.
  std::vector<std::vector<int>> pod_leaves_, pod_l2_;
  int p2_ = 1, p3_ = 1, w3_ = 1;
  std::vector<std::vector<int>> top_groups_;  // [b2] -> top switches ordered by b3 (-1 absent)
};

// Staged build-out (grow.cc): `r` embeds the recorded layout; when extra cables join its
// switches to switches it does not know, the tree the cabling (or the declared spec) shows is
// adopted if it contains the recorded one. Replaces `r` and returns true then; otherwise adds
// why not to its source note.
bool grow(const Layout& recorded, const Fabric& fabric, const RecognizeOptions& options,
          const FatTreeSpec* declared, Recognition& r);

}  // namespace laas::topology::recognition

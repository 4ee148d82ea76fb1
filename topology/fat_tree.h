// The fat-tree model: a 2- or 3-level XGFT/PGFT with stable ids for hosts, switches and up-links.
//
// Labelling follows XGFT (Ohring et al.): level i has m_i children per switch, every node one
// level below has w_i parents, connected by p_i parallel links. Hosts are level 0 and have one
// port (w_1 = p_1 = 1). A "pod" is the 2-level sub-tree under one level-3 sub-tree; a 2-level
// tree is one pod. Up-links are grouped into "columns": column c of a level-l switch is its
// c-th up-port, going to parent c / p_{l+1} over parallel link c % p_{l+1}. A column is the
// paper's "spine" of the link-allocation matrix: a spine with p parallel links per leaf is, for
// capacity, p separate spines (its crossbar is non-blocking).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace laas::topology {

// A spec that cannot describe a fat-tree; what() names the offending field.
class SpecError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct LevelSpec {
  int children = 0;  // m_i
  int parents = 0;   // w_i
  int parallel = 1;  // p_i
};

struct FatTreeSpec {
  std::vector<LevelSpec> levels;  // levels[0] is level 1 (leaves)
  std::string text() const;       // canonical pgft(...) / xgft(...) form
};

// Parses "xgft(h;m1,..,mh;w1,..,wh)" or "pgft(h;m..;w..;p..)". Throws SpecError.
FatTreeSpec parse_spec(const std::string& text);

using HostId = int;
using SwitchId = int;  // global switch index, see FatTree::switch_id
using LinkId = int;    // global up-link index: level-1 up-links first, then level-2 up-links

// One end of a cable: a switch (or host, when level == 0) and a 1-based port number.
struct PortRef {
  int level = 0;  // 0 host, 1 leaf, 2, 3
  int index = 0;  // index within the level
  int port = 0;   // 1-based physical port
};

class FatTree {
 public:
  explicit FatTree(FatTreeSpec spec);  // validates; throws SpecError
  static FatTree parse(const std::string& text) { return FatTree(parse_spec(text)); }

  const FatTreeSpec& spec() const { return spec_; }
  int height() const { return static_cast<int>(spec_.levels.size()); }
  int m(int level) const { return spec_.levels.at(level - 1).children; }
  int w(int level) const { return spec_.levels.at(level - 1).parents; }
  int p(int level) const { return spec_.levels.at(level - 1).parallel; }

  int num_hosts() const { return num_hosts_; }
  int hosts_per_leaf() const { return m(1); }
  int leaves_per_pod() const { return m(2); }
  int num_pods() const { return height() == 3 ? m(3) : 1; }
  int num_leaves() const { return leaves_per_pod() * num_pods(); }
  int num_switches(int level) const { return switches_per_level_.at(level - 1); }
  int total_switches() const;
  int switches_per_pod(int level) const;  // level 1 or 2 switches inside one pod

  // Up-link columns of a level-1 (leaf) or level-2 switch; 0 for the top level.
  int up_columns(int level) const;
  // Down-links / up-links of a level-l switch (O_l in the paper); 1 for full bisection.
  double oversubscription(int level) const;
  // ceil(O_l) as the integer the slimmed-tree rule S = ceil(D / ceil(O_l)) divides by.
  int slimming_divisor(int level) const;
  // Up-link columns a tenant needs on one level-l switch to carry `flows` flows.
  int columns_needed(int level, int flows) const;

  // Host <-> leaf.
  int leaf_of_host(HostId host) const { return host / m(1); }
  int slot_of_host(HostId host) const { return host % m(1); }
  HostId host_at(int leaf, int slot) const { return leaf * m(1) + slot; }
  int pod_of_leaf(int leaf) const { return leaf / m(2); }
  int leaf_in_pod(int leaf) const { return leaf % m(2); }
  // Level-2 switches of a pod are pod * switches_per_pod(2) + b2.
  int level2_switch(int pod, int b2) const { return pod * switches_per_pod(2) + b2; }
  int pod_of_level2(int sw) const { return sw / switches_per_pod(2); }

  // Links. Level-1 up-link of leaf `leaf`, column c; level-2 up-link of level-2 switch s.
  int num_links(int level) const { return level == 1 ? num_l1_links_ : num_l2_links_; }
  int total_links() const { return num_l1_links_ + num_l2_links_; }
  LinkId l1_link(int leaf, int column) const { return leaf * up_columns(1) + column; }
  LinkId l2_link(int sw, int column) const { return num_l1_links_ + sw * up_columns(2) + column; }
  int link_level(LinkId link) const { return link < num_l1_links_ ? 1 : 2; }
  int link_switch(LinkId link) const;  // index of the lower switch within its level
  int link_column(LinkId link) const;
  PortRef link_lower(LinkId link) const;  // the lower switch's up-port
  PortRef link_upper(LinkId link) const;  // the parent's down-port

  // Physical wiring shared by laas-topogen and the plugin: on every switch the up-ports come
  // first (1..up_columns), then the down-ports; a top switch has only down-ports from 1.
  int up_port(int /*level*/, int column) const { return column + 1; }
  int down_port(int level, int child_index, int parallel_index) const;
  int num_ports(int level) const;
  PortRef host_peer(HostId host) const;  // the leaf port a host is cabled to
  // Parent of a level-l switch (l >= 1) through its up-column c.
  PortRef parent_of(int level, int index, int column) const;

  std::string host_name(HostId host) const { return "comp-" + std::to_string(host + 1); }
  std::string switch_name(int level, int index) const;

 private:
  FatTreeSpec spec_;
  int num_hosts_ = 0;
  std::vector<int> switches_per_level_;
  int num_l1_links_ = 0;
  int num_l2_links_ = 0;
};

}  // namespace laas::topology

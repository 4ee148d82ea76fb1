// The first phases of a routing computation (compute.cc's TableComputation): the request
// checked and indexed by host and link (RouteInput), then the management up-links chosen from
// it (ManagementLinks). The later phases (host_routes.h, switch_routes.h) only read them.
// Internal to routing/: not part of the library's interface.
#pragma once

#include <bitset>
#include <string>
#include <vector>

#include "routing/routing.h"

namespace laas::routing::phases {

// Owner classes of hosts and links, besides tenant indices (>= 0).
constexpr int kFree = -1;
constexpr int kManagement = -2;
constexpr int kOpenOr = -3;  // links nobody holds or held by Job::owner
constexpr int kNobody = -4;
// Held by a tenant but retired by a repair: only management routes cross it.
constexpr int kIdle = -5;
using ColumnSet = std::bitset<256>;

// The request, checked against the tree (RoutingError on the first thing that is not in it
// or is held twice), with every host's class and every link's owner.
struct RouteInput {
  // Warnings about the request itself (a tenant holding faulty links) go to `warnings`.
  RouteInput(const FatTree& tree, const RoutingRequest& request,
             std::vector<std::string>& warnings);

  const FatTree& t;
  const RoutingRequest& req;
  const int h, up1, up2, p2, p3, w3, l2_per_pod;
  int up_cols[4] = {0, 0, 0, 0};
  int par[4] = {1, 1, 1, 1};
  std::vector<int> host_class;  // [host] tenant index, kFree or kManagement
  std::vector<int> owner;       // [link] tenant index, kFree or kIdle
  std::vector<char> faulty;     // [link]
  std::vector<char> mgmt_leaf;  // [leaf] holds a management host or is a management switch

  bool allowed(int cls, LinkId l, int link_owner) const {
    if (faulty[l]) return false;
    if (cls == kOpenOr) return owner[l] == kFree || owner[l] == link_owner;
    return cls == kManagement || owner[l] == cls;
  }
  int down_port(int level, int child, int parallel) const {
    return up_cols[level] + child * par[level] + parallel + 1;
  }
  int pod_of_l2(int s) const { return s / l2_per_pod; }
  // The tenant holding most of a switch's working up-links (the first such on a tie), kNobody
  // when no tenant holds one.
  int main_up_owner(int level, int sw) const;
  // Threads for `work_items` independent items, as the request allows.
  int thread_count(int work_items) const;

 private:
  void check_faulty_links();
  void check_management();
  void check_tenant(int ti, std::vector<std::string>& warnings);
};

// Which open up-links of a management leaf carry management traffic to tenants (the
// "management up-links", sl2vl.h rule 3): every other open up-link when the leaf also
// holds hosts of other owners, so they keep open up-links of their own; all of them when
// only management hosts sit there. Also each leaf's single owner (a tenant whose hosts are
// the only non-management hosts there), whose links its management traffic may fall back on.
struct ManagementLinks {
  std::vector<ColumnSet> mgmt_cols, block, not_mgmt;  // [leaf]
  std::vector<ColumnSet> beside_mgmt;  // [leaf] every up-column but the management up-links
  std::vector<int> single_owner;       // [leaf]
  std::vector<int> l2_owner;           // [level-2 switch]
  std::vector<ColumnSet> owner_cols;   // [leaf] up-columns of single_owner
};

ManagementLinks choose_management_links(const RouteInput& in);

}  // namespace laas::routing::phases

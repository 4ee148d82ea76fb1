#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "allocator/placer.h"
#include "allocator/rail_projection.h"

namespace laas::allocator {

PlaceResult place_servers(const LinkState& state, const std::vector<std::vector<HostId>>& servers,
                          int count) {
  const FatTree& tree = state.tree();
  if (count <= 0) return {std::nullopt, "the number of servers must be positive"};
  // Rail groups: servers whose ports are cabled to the same leaves; their free servers. Only
  // servers of the rail count: a GPU tenant asking for servers never gets a storage host.
  const int rails = rail_count(servers);
  std::map<std::vector<int>, std::vector<int>> free_in_group;
  int free_total = 0;
  for (int s = 0; s < static_cast<int>(servers.size()); ++s) {
    const auto& ports = servers[s];
    if (static_cast<int>(ports.size()) != rails) continue;
    bool free = true;
    std::vector<int> leaves;
    for (HostId h : ports) {
      free = free && state.host_owner(h) == kFree && !state.host_down(h);
      leaves.push_back(tree.leaf_of_host(h));
    }
    std::sort(leaves.begin(), leaves.end());
    // Two ports of a server on one leaf would make its leaf count differ from its neighbours'.
    if (std::adjacent_find(leaves.begin(), leaves.end()) != leaves.end()) continue;
    auto& group = free_in_group[leaves];
    if (free) {
      group.push_back(s);
      ++free_total;
    }
  }
  if (free_total < count)
    return {std::nullopt, "only " + std::to_string(free_total) + " whole servers of " +
                              std::to_string(rails) +
                              " port(s) are free (all their ports free and up)"};
  // Per rail, Theorem 1 with a remainder (N = Q*D + R servers on every rail), inside a pod or
  // across pods: the rail projection.
  auto on_rails = place_on_rail_projection(state, servers, count);
  if (on_rails.placement) return on_rails;
  std::string last_reason;
  // Where the projection does not apply (groups spanning pods, leaves shared by two groups):
  // the same number of servers from every group used, fewest groups
  // first: q groups of count/q servers each.
  for (int q = 1; q <= count; ++q) {
    if (count % q) continue;
    const int k = count / q;
    std::vector<const std::vector<int>*> eligible;
    for (const auto& [leaves, free] : free_in_group)
      if (static_cast<int>(free.size()) >= k) eligible.push_back(&free);
    if (static_cast<int>(eligible.size()) < q) continue;
    // Tightest groups first: the wholly free ones stay for tenants that need them.
    std::stable_sort(eligible.begin(), eligible.end(),
                     [](const auto* a, const auto* b) { return a->size() < b->size(); });
    std::vector<HostId> chosen;
    int used = 0;
    for (const auto* group : eligible) {
      std::vector<HostId> trial = chosen;
      for (int i = 0; i < k; ++i)
        for (HostId h : servers[(*group)[i]]) trial.push_back(h);
      // The partial selection must already be placeable: adding leaves only narrows the
      // spines they share.
      auto result = place_on_hosts(state, trial);
      if (!result.placement) {
        last_reason = result.reason;
        continue;
      }
      chosen = std::move(trial);
      if (++used == q) {
        result.placement->hosts = chosen;
        std::sort(result.placement->hosts.begin(), result.placement->hosts.end());
        return result;
      }
    }
  }
  std::string groups;
  for (const auto& [leaves, free] : free_in_group)
    if (!free.empty()) groups += (groups.empty() ? "" : ", ") + std::to_string(free.size());
  return {std::nullopt, std::to_string(count) +
                            " whole servers do not fit: a tenant takes the same number of "
                            "servers from each rail group it uses (free servers per group: " +
                            groups + ")" + (last_reason.empty() ? "" : "; " + last_reason) +
                            "; rail by rail: " + on_rails.reason};
}

namespace {

class ServerPlacer : public Placer {
 public:
  ServerPlacer(bool isolate, std::vector<std::vector<HostId>> servers)
      : isolate_(isolate), servers_(std::move(servers)) {
    ports_ = servers_.empty() ? 1 : static_cast<int>(servers_.front().size());
    for (const auto& s : servers_)
      if (static_cast<int>(s.size()) != ports_)
        throw std::invalid_argument("servers of different port counts");
  }
  std::string name() const override { return isolate_ ? "laas-servers" : "unconstrained-servers"; }
  bool isolates() const override { return isolate_; }
  PlaceResult place(const LinkState& state, int hosts) const override {
    const int count = (hosts + ports_ - 1) / ports_;
    if (isolate_) return place_servers(state, servers_, count);
    Placement p;
    for (const auto& s : servers_) {
      if (static_cast<int>(p.hosts.size()) == count * ports_) break;
      bool free = true;
      for (HostId h : s) free = free && state.host_owner(h) == kFree && !state.host_down(h);
      if (free) p.hosts.insert(p.hosts.end(), s.begin(), s.end());
    }
    if (static_cast<int>(p.hosts.size()) < count * ports_)
      return {std::nullopt, "fewer than " + std::to_string(count) + " whole servers are free"};
    std::sort(p.hosts.begin(), p.hosts.end());
    return {std::move(p), ""};
  }

 private:
  bool isolate_;
  std::vector<std::vector<HostId>> servers_;
  int ports_ = 1;
};

}  // namespace

std::unique_ptr<Placer> make_server_placer(const std::string& algorithm,
                                           std::vector<std::vector<HostId>> servers) {
  if (algorithm != "laas" && algorithm != "unconstrained")
    throw std::invalid_argument("placing whole servers: algorithm '" + algorithm +
                                "' is not supported (laas, unconstrained)");
  return std::make_unique<ServerPlacer>(algorithm == "laas", std::move(servers));
}

}  // namespace laas::allocator

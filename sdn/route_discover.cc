#include "sdn/route_discover.h"

#include <algorithm>
#include <deque>
#include <map>
#include <stdexcept>

namespace laas::sdn {

namespace {

DiscoveredPort* find(DiscoveredNode& node, int number) {
  for (auto& p : node.ports)
    if (p.number == number) return &p;
  return nullptr;
}

DiscoveredPort& port_of(DiscoveredNode& node, int number) {
  if (auto* p = find(node, number)) return *p;
  DiscoveredPort p;
  p.number = number;
  node.ports.push_back(p);
  return node.ports.back();
}

struct Entry {
  int node = -1;
  int port = 0;  // the port the SMP entered the node by
};

// One walk: the records so far, by node GUID, and the switches still to expand.
class Walk {
 public:
  explicit Walk(SmpSource& smp) : smp_(smp) {}

  // The node at the end of `path`, recorded when new, its entry port recorded; throws when
  // it does not answer.
  Entry reach(const std::string& path) {
    const SmpNodeInfo info = smp_.node_info(path);
    const auto [it, fresh] = by_guid_.emplace(info.node_guid, static_cast<int>(out.nodes.size()));
    if (fresh) add(path, info);
    auto& node = out.nodes[it->second];
    if (node.type != NodeType::kSwitch) {
      // A CA answers for the port it was reached by; several ports, several visits.
      auto& p = port_of(node, info.local_port);
      p.guid = info.port_guid;
      p.lid = smp_.port_info(path, info.local_port).lid;
    }
    return {it->second, info.local_port};
  }

  void cable(Entry a, Entry b) {
    auto& pa = port_of(out.nodes[a.node], a.port);
    pa.peer = b.node;
    pa.peer_port = b.port;
    auto& pb = port_of(out.nodes[b.node], b.port);
    pb.peer = a.node;
    pb.peer_port = a.port;
  }

  // Every LinkUp port of switch `s` not cabled yet: the node behind it reached and cabled.
  void expand(int s) {
    const std::string path = out.nodes[s].path;
    for (int p = 1; p <= out.nodes[s].num_ports; ++p) {
      if (const auto* known = find(out.nodes[s], p); known && known->peer >= 0) continue;
      try {
        if (!smp_.port_info(path, p).link_up) continue;
        cable({s, p}, reach(path + "," + std::to_string(p)));
      } catch (const std::runtime_error&) {
        ++unanswered;  // a cable pulled while we walk, a node that does not answer: left out
      }
    }
  }

  bool next_switch(int* s) {
    if (switches_.empty()) return false;
    *s = switches_.front();
    switches_.pop_front();
    return true;
  }

  Discovery out;
  int unanswered = 0;

 private:
  void add(const std::string& path, const SmpNodeInfo& info) {
    DiscoveredNode n;
    n.type = info.type;
    n.guid = info.node_guid;
    n.num_ports = info.num_ports;
    n.path = path;
    n.description = smp_.node_description(path);
    if (n.type == NodeType::kSwitch) {
      DiscoveredPort management;
      management.guid = info.port_guid;
      management.lid = smp_.port_info(path, 0).lid;
      n.ports.push_back(management);
      switches_.push_back(static_cast<int>(out.nodes.size()));
    }
    out.nodes.push_back(std::move(n));
  }

  SmpSource& smp_;
  std::map<topology::Guid, int> by_guid_;
  std::deque<int> switches_;
};

int hops(const std::string& path) {
  return static_cast<int>(std::count(path.begin(), path.end(), ','));
}

}  // namespace

Discovery discover_by_route(SmpSource& smp, int* unanswered, int max_hops) {
  Walk walk(smp);
  const Entry local = walk.reach("0");  // throws: nothing to discover from
  walk.out.from_node = local.node;
  walk.out.from_port = local.port;
  const auto& start = walk.out.nodes[local.node];
  if (start.type != NodeType::kSwitch) {
    // An adapter forwards nothing: its own cable only.
    try {
      if (smp.port_info("0", local.port).link_up)
        walk.cable(local, walk.reach("0," + std::to_string(local.port)));
    } catch (const std::runtime_error&) {
      ++walk.unanswered;
    }
  }
  for (int s = 0; walk.next_switch(&s);)
    if (hops(walk.out.nodes[s].path) < max_hops) walk.expand(s);
  if (unanswered) *unanswered = walk.unanswered;
  return std::move(walk.out);
}

}  // namespace laas::sdn

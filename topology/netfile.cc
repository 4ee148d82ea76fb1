#include "topology/netfile.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace laas::topology {
namespace {

struct Cable {
  int port;
  std::string peer;
  int peer_port;
};

}  // namespace

void write_netfile(const FatTree& tree, std::ostream& out) {
  // Collect every switch's cables, keyed by (level, index), then print in port order.
  std::map<std::pair<int, int>, std::vector<Cable>> cables;
  auto name_of = [&](const PortRef& r) {
    return r.level == 0 ? tree.host_name(r.index) : tree.switch_name(r.level, r.index);
  };
  for (HostId h = 0; h < tree.num_hosts(); ++h) {
    const PortRef leaf = tree.host_peer(h);
    cables[{1, leaf.index}].push_back({leaf.port, tree.host_name(h), 1});
  }
  for (LinkId l = 0; l < tree.total_links(); ++l) {
    const PortRef lo = tree.link_lower(l);
    const PortRef up = tree.link_upper(l);
    cables[{lo.level, lo.index}].push_back({lo.port, name_of(up), up.port});
    cables[{up.level, up.index}].push_back({up.port, name_of(lo), lo.port});
  }
  out << "# " << tree.spec().text() << ": " << tree.num_hosts() << " hosts, "
      << tree.total_switches() << " switches (written by laas-topogen)\n\n";
  for (int level = tree.height(); level >= 1; --level) {
    for (int index = 0; index < tree.num_switches(level); ++index) {
      auto& list = cables[{level, index}];
      std::sort(list.begin(), list.end(),
                [](const Cable& a, const Cable& b) { return a.port < b.port; });
      out << "Switch\t" << tree.num_ports(level) << " \"" << tree.switch_name(level, index)
          << "\"\n";
      for (const auto& c : list)
        out << "[" << c.port << "]\t\"" << c.peer << "\"[" << c.peer_port << "]\n";
      out << "\n";
    }
  }
  for (HostId h = 0; h < tree.num_hosts(); ++h) {
    const PortRef leaf = tree.host_peer(h);
    out << "Hca\t1 \"" << tree.host_name(h) << "\"\n"
        << "[1]\t\"" << tree.switch_name(1, leaf.index) << "\"[" << leaf.port << "]\n\n";
  }
}

}  // namespace laas::topology

#include "topology/lid_order.h"

#include <cinttypes>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <utility>

namespace laas::topology {
namespace {

constexpr int kLastUnicastLid = 0xBFFF;

class Numbering {
 public:
  Numbering(const Fabric& fabric, int lmc)
      : fabric_(fabric),
        lmc_(lmc),
        step_(1 << (lmc & 7)),
        next_(step_),
        done_(fabric.nodes.size(), 0) {
    if (lmc < 0 || lmc > 7) throw std::invalid_argument("lmc must be 0-7");
  }

  void add(int node) {
    if (node < 0 || done_[node]) return;
    done_[node] = 1;
    const FabricNode& n = fabric_.nodes[node];
    const Guid guid = n.port_guid;
    if (!guid) throw std::invalid_argument("node '" + n.name + "' has no port GUID");
    if (!seen_.insert(guid).second) throw std::invalid_argument("port GUID repeats: " + hex(guid));
    if (next_ + step_ - 1 > kLastUnicastLid)
      throw std::invalid_argument("more ports than unicast LIDs (0x0001-0xBFFF) at lmc " +
                                  std::to_string(lmc_));
    out_.push_back({guid, static_cast<Lid>(next_), static_cast<Lid>(next_ + step_ - 1)});
    next_ += step_;
  }
  // A CA node with no cabled port holds no LID OpenSM could give.
  bool cabled(int node) const {
    for (const auto& p : fabric_.nodes[node].ports)
      if (p.peer_node >= 0) return true;
    return false;
  }
  std::vector<LidAssignment> take() { return std::move(out_); }

 private:
  static std::string hex(Guid g) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%016" PRIx64, g);
    return buf;
  }
  const Fabric& fabric_;
  int lmc_, step_, next_;
  std::vector<char> done_;
  std::unordered_set<Guid> seen_;
  std::vector<LidAssignment> out_;
};

}  // namespace

std::vector<LidAssignment> leaf_ordered_lids(const Fabric& fabric, const FatTree& tree,
                                             const Embedding& embedding, int lmc) {
  Numbering numbering(fabric, lmc);
  // Host ids run leaf by leaf (FatTree::leaf_of_host).
  for (HostId h = 0; h < tree.num_hosts() && h < static_cast<int>(embedding.host_node.size()); ++h)
    numbering.add(embedding.host_node[h]);
  for (const auto& level : embedding.switch_node)
    for (int node : level) numbering.add(node);
  for (int node = 0; node < static_cast<int>(fabric.nodes.size()); ++node)
    if (fabric.nodes[node].is_switch || numbering.cabled(node)) numbering.add(node);
  return numbering.take();
}

std::string format_guid2lid(const std::vector<LidAssignment>& lids) {
  std::string out;
  char line[64];
  for (const auto& a : lids) {
    // A blank line after each entry: OpenSM's reader (osm_db_restore) adds every following
    // non-empty line to the value of the entry before it.
    std::snprintf(line, sizeof line, "0x%016" PRIx64 " 0x%04x 0x%04x\n\n", a.port_guid, a.base,
                  a.last);
    out += line;
  }
  return out;
}

}  // namespace laas::topology

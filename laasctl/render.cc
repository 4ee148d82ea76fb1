#include "laasctl/render.h"

#include <sstream>
#include <vector>

namespace laas::ctl {
namespace {

const char* kPalette[] = {"\033[31m", "\033[32m", "\033[33m", "\033[34m",
                          "\033[35m", "\033[36m", "\033[91m", "\033[92m"};

}  // namespace

std::string render_allocation_map(const allocator::Cluster& cluster, bool color) {
  const auto& tree = cluster.tree();
  const auto& state = cluster.state();
  // Tenants get letters in name order, so the legend is stable between calls.
  std::map<allocator::TenantIndex, char> letter;
  std::map<allocator::TenantIndex, std::string> name_of;
  char next = 'A';
  for (const auto& [name, t] : cluster.tenants()) {
    letter[t.index] = next;
    name_of[t.index] = name;
    next = next == 'Z' ? 'a' : next == 'z' ? '*' : static_cast<char>(next + 1);
  }
  auto cell = [&](allocator::TenantIndex owner, bool faulty) {
    if (faulty) return std::string("X");
    if (owner == allocator::kFree) return std::string(".");
    std::string s(1, letter[owner]);
    if (color) s = kPalette[owner % 8] + s + "\033[0m";
    return s;
  };
  std::ostringstream out;
  out << tree.spec().text() << ": " << tree.num_hosts() << " hosts, " << state.free_hosts()
      << " free; level-1 up-links allocated " << state.allocated_links(1) << "/"
      << tree.num_links(1);
  if (tree.height() == 3)
    out << ", level-2 " << state.allocated_links(2) << "/" << tree.num_links(2);
  out << "\n\n";
  const int width = static_cast<int>(tree.switch_name(1, tree.num_leaves() - 1).size());
  auto pad = [&](const std::string& s) { return s + std::string(width + 2 - s.size(), ' '); };
  out << pad("leaf") << "hosts" << std::string(std::max(1, tree.hosts_per_leaf() - 4), ' ')
      << "  up-links (columns 1.." << tree.up_columns(1) << ")\n";
  for (int leaf = 0; leaf < tree.num_leaves(); ++leaf) {
    out << pad(tree.switch_name(1, leaf));
    for (int s = 0; s < tree.hosts_per_leaf(); ++s)
      out << cell(state.host_owner(tree.host_at(leaf, s)), false);
    out << std::string(std::max(1, 5 - tree.hosts_per_leaf()) + 2, ' ');
    for (int c = 0; c < tree.up_columns(1); ++c) {
      const auto l = tree.l1_link(leaf, c);
      out << cell(state.link_owner(l), state.link_faulty(l));
    }
    out << "\n";
  }
  if (tree.height() == 3) {
    out << "\n" << pad("level-2") << "up-links (columns 1.." << tree.up_columns(2) << ")\n";
    for (int sw = 0; sw < tree.num_switches(2); ++sw) {
      out << pad(tree.switch_name(2, sw));
      for (int c = 0; c < tree.up_columns(2); ++c) {
        const auto l = tree.l2_link(sw, c);
        out << cell(state.link_owner(l), state.link_faulty(l));
      }
      out << "\n";
    }
  }
  if (!name_of.empty()) {
    out << "\n";
    for (const auto& [index, name] : name_of)
      out << "  " << cell(index, false) << " = " << name << "\n";
  }
  return out.str();
}

}  // namespace laas::ctl

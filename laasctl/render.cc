#include "laasctl/render.h"

#include <map>
#include <sstream>

namespace laas::ctl {
namespace {

const char* kPalette[] = {"\033[31m", "\033[32m", "\033[33m", "\033[34m",
                          "\033[35m", "\033[36m", "\033[91m", "\033[92m"};

std::string owner_name(const allocator::Cluster& c, allocator::TenantIndex i,
                       const std::map<allocator::TenantIndex, std::string>& names) {
  if (i == allocator::kFree) return "";
  if (i == allocator::kReserved) return "@management";
  auto it = names.find(i);
  return it == names.end() ? "?" : it->second;
  (void)c;
}

std::string summary_line(const std::string& spec, long hosts, long free, long l1, long l1_all,
                         long l2, long l2_all) {
  std::ostringstream out;
  out << spec << ": " << hosts << " hosts, " << free << " free; level-1 up-links allocated " << l1
      << "/" << l1_all;
  if (l2_all > 0) out << ", level-2 " << l2 << "/" << l2_all;
  return out.str();
}

}  // namespace

AllocationMap map_from_cluster(const allocator::Cluster& cluster) {
  const auto& tree = cluster.tree();
  const auto& state = cluster.state();
  std::map<allocator::TenantIndex, std::string> names;
  for (const auto& [name, t] : cluster.tenants()) names[t.index] = name;
  AllocationMap map;
  map.summary = summary_line(tree.spec().text(), tree.num_hosts(), state.free_hosts(),
                             state.allocated_links(1), tree.num_links(1),
                             tree.height() == 3 ? state.allocated_links(2) : 0,
                             tree.height() == 3 ? tree.num_links(2) : 0);
  auto link_owner = [&](laas::topology::LinkId l) {
    return state.link_faulty(l) ? std::string("@faulty")
                                : owner_name(cluster, state.link_owner(l), names);
  };
  for (int leaf = 0; leaf < tree.num_leaves(); ++leaf) {
    MapRow row{tree.switch_name(1, leaf), {}, {}};
    for (int s = 0; s < tree.hosts_per_leaf(); ++s)
      row.hosts.push_back(owner_name(cluster, state.host_owner(tree.host_at(leaf, s)), names));
    for (int c = 0; c < tree.up_columns(1); ++c)
      row.up_links.push_back(link_owner(tree.l1_link(leaf, c)));
    map.leaves.push_back(std::move(row));
  }
  if (tree.height() == 3)
    for (int sw = 0; sw < tree.num_switches(2); ++sw) {
      MapRow row{tree.switch_name(2, sw), {}, {}};
      for (int c = 0; c < tree.up_columns(2); ++c)
        row.up_links.push_back(link_owner(tree.l2_link(sw, c)));
      map.level2.push_back(std::move(row));
    }
  return map;
}

AllocationMap map_from_json(const nlohmann::json& j) {
  try {
    AllocationMap map;
    map.summary = summary_line(j.at("topology").get<std::string>(), j.at("hosts").get<long>(),
                               j.at("free_hosts").get<long>(), j.at("l1_allocated").get<long>(),
                               j.at("l1_links").get<long>(), j.at("l2_allocated").get<long>(),
                               j.at("l2_links").get<long>());
    auto owners = [](const nlohmann::json& list) {
      std::vector<std::string> out;
      for (const auto& o : list) out.push_back(o.is_null() ? "" : o.get<std::string>());
      return out;
    };
    // Cells listed as down (older services send no such lists).
    auto mark_down = [](const nlohmann::json& row, const char* key, std::vector<std::string>& v) {
      if (!row.contains(key)) return;
      // Either a list of indices or one flag per cell.
      const auto& list = row.at(key);
      for (std::size_t n = 0; n < list.size(); ++n) {
        const auto& i = list[n];
        if (i.is_boolean() && !i.get<bool>()) continue;
        const auto k = i.is_boolean() ? n : i.get<std::size_t>();
        if (k < v.size()) v[k] = v[k].empty() || v[k][0] == '@' ? "@down" : "@down:" + v[k];
      }
    };
    for (const auto& leaf : j.at("leaves")) {
      MapRow row{leaf.at("name").get<std::string>(), owners(leaf.at("hosts")),
                 owners(leaf.at("up_links"))};
      mark_down(leaf, "hosts_down", row.hosts);
      mark_down(leaf, "up_links_down", row.up_links);
      row.rail = leaf.value("rail", -1);
      row.rail_group = leaf.value("rail_group", -1);
      map.leaves.push_back(std::move(row));
    }
    for (const auto& sw : j.at("level2")) {
      MapRow row{sw.at("name").get<std::string>(), {}, owners(sw.at("up_links"))};
      mark_down(sw, "up_links_down", row.up_links);
      map.level2.push_back(std::move(row));
    }
    if (j.contains("down"))
      for (const auto& d : j.at("down")) map.down.push_back(d.get<std::string>());
    return map;
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("malformed topology reply: ") + e.what());
  }
}

std::vector<const MapRow*> leaves_in_order(const AllocationMap& map, bool* railed) {
  std::vector<const MapRow*> rows;
  for (const auto& row : map.leaves) rows.push_back(&row);
  *railed = std::any_of(rows.begin(), rows.end(), [](auto* r) { return r->rail > 0; });
  if (*railed)
    std::stable_sort(rows.begin(), rows.end(), [](auto* a, auto* b) {
      return std::make_pair(a->rail, a->rail_group) < std::make_pair(b->rail, b->rail_group);
    });
  return rows;
}

std::string render_allocation_map(const AllocationMap& map, bool color) {
  // Tenants get letters in name order, so the legend is stable between calls.
  std::map<std::string, int> index;
  for (const auto* rows : {&map.leaves, &map.level2})
    for (const auto& row : *rows)
      for (const auto* cells : {&row.hosts, &row.up_links})
        for (const auto& o : *cells)
          if (!o.empty() && o[0] != '@') index.emplace(o, 0);
  int next = 0;
  for (auto& [name, i] : index) i = next++;
  auto letter = [](int i) {
    const char* letters = "ABCDEFGHIJKLMNOPQRSTUVWYZabcdefghijklnopqrstuvwyz";
    return i < 49 ? letters[i] : '*';
  };
  auto cell = [&](const std::string& owner) {
    if (owner.empty()) return std::string(".");
    if (owner == "@faulty" || owner.rfind("@down", 0) == 0) return std::string("X");
    if (owner == "@management") return std::string("m");
    if (owner == "@drained") return std::string("~");
    const int i = index[owner];
    std::string s(1, letter(i));
    return color ? kPalette[i % 8] + s + "\033[0m" : s;
  };
  size_t width = 4;
  for (const auto& r : map.leaves) width = std::max(width, r.name.size());
  for (const auto& r : map.level2) width = std::max(width, r.name.size());
  auto pad = [&](const std::string& s) { return s + std::string(width + 2 - s.size(), ' '); };
  std::ostringstream out;
  out << map.summary << "\n\n";
  const size_t host_width = map.leaves.empty() ? 0 : map.leaves[0].hosts.size();
  const size_t host_col = std::max<size_t>(host_width, 5) + 2;
  out << pad("leaf") << "hosts" << std::string(host_col - 5, ' ') << "up-links\n";
  // Rail by rail when the leaves are rails (servers with a port on each): a tenant's servers
  // then show as the same columns of hosts on every rail.
  bool railed = false;
  const auto rows = leaves_in_order(map, &railed);
  int shown_rail = -1;
  for (const MapRow* r : rows) {
    const MapRow& row = *r;
    if (railed && row.rail != shown_rail) {
      shown_rail = row.rail;
      out << "rail " << row.rail << ":\n";
    }
    out << pad(row.name);
    for (const auto& o : row.hosts) out << cell(o);
    out << std::string(host_col - row.hosts.size(), ' ');
    for (const auto& o : row.up_links) out << cell(o);
    out << "\n";
  }
  if (!map.level2.empty()) {
    out << "\n" << pad("level-2") << "up-links\n";
    for (const auto& row : map.level2) {
      out << pad(row.name);
      for (const auto& o : row.up_links) out << cell(o);
      out << "\n";
    }
  }
  out << "\n";
  for (const auto& [name, i] : index) out << "  " << cell(name) << " = " << name << "\n";
  out << "  . = free, m = management (never allocated), ~ = drained (out of service), X = down or "
         "faulty\n";
  if (!map.down.empty()) {
    out << "\ndown now:\n";
    for (const auto& d : map.down) out << "  " << d << "\n";
  }
  return out.str();
}

}  // namespace laas::ctl

#include "topology/fat_tree.h"

#include <cctype>
#include <cmath>
#include <sstream>

#include "util/text.h"

namespace laas::topology {
namespace {

// InfiniBand switches address ports with 8 bits and port 255 is reserved.
constexpr int kMaxSwitchPorts = 254;
// Unicast LIDs run from 1 to 0xBFFF; every host port and every switch takes one.
constexpr long kMaxEndpoints = 0xBFFF;

using util::trim;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      parts.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(trim(cur));
  return parts;
}

int parse_positive(const std::string& text, const std::string& field) {
  if (text.empty()) throw SpecError(field + " is empty");
  for (char c : text)
    if (!std::isdigit(static_cast<unsigned char>(c)))
      throw SpecError(field + " '" + text + "' is not a positive integer");
  if (text.size() > 6) throw SpecError(field + " '" + text + "' is too large");
  int v = std::stoi(text);
  if (v <= 0) throw SpecError(field + " must be at least 1, got " + text);
  return v;
}

std::vector<int> parse_list(const std::string& text, int h, const std::string& field) {
  auto parts = split(text, ',');
  if (static_cast<int>(parts.size()) != h)
    throw SpecError(field + " has " + std::to_string(parts.size()) + " values, the height is " +
                    std::to_string(h));
  std::vector<int> out;
  for (size_t i = 0; i < parts.size(); ++i)
    out.push_back(parse_positive(parts[i], field.substr(0, 1) + std::to_string(i + 1)));
  return out;
}

std::string join(const std::vector<int>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

}  // namespace

FatTreeSpec parse_spec(const std::string& raw) {
  const std::string text = trim(raw);
  const auto open = text.find('(');
  if (open == std::string::npos || text.back() != ')')
    throw SpecError("topology '" + text + "': expected xgft(h;m..;w..) or pgft(h;m..;w..;p..)");
  std::string kind = trim(text.substr(0, open));
  for (auto& c : kind) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (kind != "xgft" && kind != "pgft")
    throw SpecError("topology kind '" + kind + "' is unknown: use xgft or pgft");
  auto fields = split(text.substr(open + 1, text.size() - open - 2), ';');
  const size_t expected = kind == "xgft" ? 3 : 4;
  if (fields.size() != expected)
    throw SpecError(kind + " takes " + std::to_string(expected) + " ';'-separated fields, got " +
                    std::to_string(fields.size()));
  const int h = parse_positive(fields[0], "height h");
  if (h != 2 && h != 3)
    throw SpecError("height h is " + std::to_string(h) +
                    ": only 2- and 3-level trees are supported");
  auto m = parse_list(fields[1], h, "m (children per switch)");
  auto w = parse_list(fields[2], h, "w (parents per node)");
  std::vector<int> p(h, 1);
  if (kind == "pgft") p = parse_list(fields[3], h, "p (parallel links)");
  FatTreeSpec spec;
  for (int i = 0; i < h; ++i) spec.levels.push_back({m[i], w[i], p[i]});
  return spec;
}

std::string FatTreeSpec::text() const {
  std::vector<int> m, w, p;
  bool parallel = false;
  for (const auto& l : levels) {
    m.push_back(l.children);
    w.push_back(l.parents);
    p.push_back(l.parallel);
    parallel = parallel || l.parallel != 1;
  }
  const std::string h = std::to_string(levels.size());
  if (!parallel) return "xgft(" + h + ";" + join(m) + ";" + join(w) + ")";
  return "pgft(" + h + ";" + join(m) + ";" + join(w) + ";" + join(p) + ")";
}

FatTree::FatTree(FatTreeSpec spec) : spec_(std::move(spec)) {
  const int h = height();
  if (h != 2 && h != 3) throw SpecError("only 2- and 3-level trees are supported");
  for (int l = 1; l <= h; ++l)
    if (m(l) < 1 || w(l) < 1 || p(l) < 1)
      throw SpecError("level " + std::to_string(l) + ": m, w and p must be at least 1");
  if (w(1) != 1 || p(1) != 1)
    throw SpecError("w1 and p1 must be 1: hosts with several fabric ports are not supported");
  long hosts = 1;
  for (int l = 1; l <= h; ++l) hosts *= m(l);
  num_hosts_ = static_cast<int>(hosts);
  // Level-l switches: prod_{i>l} m_i * prod_{i<=l} w_i.
  long endpoints = hosts;
  for (int l = 1; l <= h; ++l) {
    long count = 1;
    for (int i = l + 1; i <= h; ++i) count *= m(i);
    for (int i = 1; i <= l; ++i) count *= w(i);
    switches_per_level_.push_back(static_cast<int>(count));
    endpoints += count;
    if (num_ports(l) > kMaxSwitchPorts)
      throw SpecError("level " + std::to_string(l) + " switches need " +
                      std::to_string(num_ports(l)) + " ports (m" + std::to_string(l) + "*p" +
                      std::to_string(l) + " down + w" + std::to_string(l + 1) + "*p" +
                      std::to_string(l + 1) + " up); InfiniBand allows " +
                      std::to_string(kMaxSwitchPorts));
    if (endpoints > kMaxEndpoints)
      throw SpecError("the tree has more than " + std::to_string(kMaxEndpoints) +
                      " hosts and switches, the InfiniBand unicast LID space");
  }
  num_l1_links_ = num_leaves() * up_columns(1);
  num_l2_links_ = h == 3 ? num_switches(2) * up_columns(2) : 0;
}

int FatTree::total_switches() const {
  int total = 0;
  for (int c : switches_per_level_) total += c;
  return total;
}

int FatTree::switches_per_pod(int level) const {
  return level == 1 ? m(2) : w(2);  // w1 == 1
}

int FatTree::up_columns(int level) const {
  if (level >= height()) return 0;
  return w(level + 1) * p(level + 1);
}

double FatTree::oversubscription(int level) const {
  const int up = up_columns(level);
  return up == 0 ? 1.0 : static_cast<double>(m(level) * p(level)) / up;
}

int FatTree::slimming_divisor(int level) const {
  const int down = m(level) * p(level);
  const int up = up_columns(level);
  if (up == 0 || down <= up) return 1;
  return (down + up - 1) / up;
}

int FatTree::columns_needed(int level, int flows) const {
  const int s = slimming_divisor(level);
  return (flows + s - 1) / s;
}

int FatTree::link_switch(LinkId link) const {
  return link < num_l1_links_ ? link / up_columns(1) : (link - num_l1_links_) / up_columns(2);
}

int FatTree::link_column(LinkId link) const {
  return link < num_l1_links_ ? link % up_columns(1) : (link - num_l1_links_) % up_columns(2);
}

PortRef FatTree::link_lower(LinkId link) const {
  const int level = link_level(link);
  return {level, link_switch(link), up_port(level, link_column(link))};
}

PortRef FatTree::link_upper(LinkId link) const {
  return parent_of(link_level(link), link_switch(link), link_column(link));
}

int FatTree::down_port(int level, int child_index, int parallel_index) const {
  return up_columns(level) + child_index * p(level) + parallel_index + 1;
}

int FatTree::num_ports(int level) const { return up_columns(level) + m(level) * p(level); }

PortRef FatTree::host_peer(HostId host) const {
  return {1, leaf_of_host(host), down_port(1, slot_of_host(host), 0)};
}

PortRef FatTree::parent_of(int level, int index, int column) const {
  const int pl = p(level + 1);
  const int b = column / pl;
  const int j = column % pl;
  if (level == 1) {
    const int pod = pod_of_leaf(index);
    return {2, level2_switch(pod, b), down_port(2, leaf_in_pod(index), j)};
  }
  // level 2 -> 3: switch (a3; b2) goes to top switch (b2, b3).
  const int pod = pod_of_level2(index);
  const int b2 = index % switches_per_pod(2);
  return {3, b2 * w(3) + b, down_port(3, pod, j)};
}

std::string FatTree::switch_name(int level, int index) const {
  return "SW_L" + std::to_string(level) + "_" + std::to_string(index);
}

}  // namespace laas::topology

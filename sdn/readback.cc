#include "sdn/readback.h"

#include <cinttypes>
#include <cstdio>
#include <unordered_map>

namespace laas::sdn {

namespace {

std::string describe(const routing::DumpedTable& t) {
  char text[48];
  std::snprintf(text, sizeof text, "0x%016" PRIx64, static_cast<std::uint64_t>(t.guid));
  return "switch " + std::string(text) + (t.name.empty() ? "" : " (" + t.name + ")");
}

std::uint8_t entry(const routing::LidTable& t, std::size_t lid) {
  return lid < t.size() ? t[lid] : routing::kNoRoute;
}

void compare_one(const routing::DumpedTable& w, const routing::DumpedTable& r,
                 std::size_t max_lines, Readback& out) {
  const std::size_t top = std::max(w.table.size(), r.table.size());
  for (std::size_t lid = 1; lid < top; ++lid) {
    ++out.entries;
    const std::uint8_t want = entry(w.table, lid), got = entry(r.table, lid);
    if (want == got) continue;
    ++out.differing;
    if (out.lines.size() < max_lines)
      out.lines.push_back(describe(w) + ": LID " + std::to_string(lid) + " written " +
                          (want == routing::kNoRoute ? "none" : std::to_string(want)) +
                          ", read back " +
                          (got == routing::kNoRoute ? "none" : std::to_string(got)));
  }
}

}  // namespace

void compare_blocks(const std::string& name, const routing::LidTable& wrote,
                    const routing::LidTable& read, BlockCheck& out, std::size_t max_lines) {
  constexpr std::size_t kBlock = 64;
  ++out.switches;
  long differing = 0;
  for (std::size_t first = 0; first < wrote.size(); first += kBlock) {
    ++out.blocks;
    std::size_t lid = first;
    while (lid < first + kBlock && entry(wrote, lid) == entry(read, lid)) ++lid;
    if (lid == first + kBlock) continue;
    ++differing;
    if (out.lines.size() < max_lines)
      out.lines.push_back(name + ": block " + std::to_string(first / kBlock) + ", LID " +
                          std::to_string(lid) + " written " + std::to_string(entry(wrote, lid)) +
                          ", read back " + std::to_string(entry(read, lid)));
  }
  out.blocks_differing += differing;
  out.switches_differing += differing > 0;
}

std::vector<int> changed_switches(const topology::Fabric& fabric, const routing::LidTables& now,
                                  const std::map<topology::Guid, routing::LidTable>& before) {
  std::vector<int> out;
  for (std::size_t n = 0; n < now.size() && n < fabric.nodes.size(); ++n) {
    if (now[n].empty() || !fabric.nodes[n].is_switch) continue;
    const auto it = before.find(fabric.nodes[n].guid);
    if (it == before.end() || it->second != now[n]) out.push_back(static_cast<int>(n));
  }
  return out;
}

Readback compare_readback(const std::vector<routing::DumpedTable>& wrote,
                          const std::vector<routing::DumpedTable>& read, std::size_t max_lines) {
  std::unordered_map<topology::Guid, const routing::DumpedTable*> by_guid;
  for (const auto& r : read) by_guid[r.guid] = &r;
  Readback out;
  for (const auto& w : wrote) {
    ++out.switches;
    const auto it = by_guid.find(w.guid);
    if (it == by_guid.end()) {
      ++out.missing_switches;
      if (out.lines.size() < max_lines) out.lines.push_back(describe(w) + ": not read back");
      continue;
    }
    compare_one(w, *it->second, max_lines, out);
  }
  return out;
}

}  // namespace laas::sdn

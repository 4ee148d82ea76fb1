#include "routing/dump_text.h"

#include <cctype>
#include <cinttypes>
#include <cstdio>

namespace laas::routing::dump {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool DumpLines::next() {
  if (!std::getline(in_, raw_)) return false;
  ++number_;
  if (!raw_.empty() && raw_.back() == '\r') raw_.pop_back();
  line_ = trim(raw_);
  return true;
}

void DumpLines::fail(const std::string& why) const {
  throw DumpError(source_ + ":" + std::to_string(number_) + ": " + why + ": '" + raw_ + "'");
}

bool parse_number(const std::string& text, int base, unsigned long long* out) {
  if (text.empty()) return false;
  std::string digits = text;
  if (base == 16) {
    if (!starts_with(text, "0x") && !starts_with(text, "0X")) return false;
    digits = text.substr(2);
    if (digits.empty()) return false;
  }
  for (char c : digits)
    if (!(base == 16 ? std::isxdigit(static_cast<unsigned char>(c))
                     : std::isdigit(static_cast<unsigned char>(c))))
      return false;
  if (digits.size() > 16) return false;
  *out = std::stoull(digits, nullptr, base);
  return true;
}

std::string parse_switch_header(const std::string& line, std::size_t of_switch, SwitchHeader* out) {
  constexpr std::size_t kOfSwitch = 11;  // strlen(" of switch ")
  const auto guidpos = line.find(" guid ", of_switch);
  if (guidpos == std::string::npos) return "no ' guid ' after ' of switch '";
  const std::string addr =
      trim(line.substr(of_switch + kOfSwitch, guidpos - of_switch - kOfSwitch));
  unsigned long long lid = 0, guid = 0;
  if (starts_with(addr, "Lid ")) {
    if (!parse_number(trim(addr.substr(4)), 10, &lid) || lid > 0xFFFF) return "bad switch LID";
  } else if (!starts_with(addr, "DR path")) {
    return "neither 'Lid N' nor 'DR path' addresses the switch";
  }
  const std::string rest = line.substr(guidpos + 6);
  const auto space = rest.find(' ');
  std::string guid_text = rest.substr(0, space);
  if (!guid_text.empty() && guid_text.back() == ':') guid_text.pop_back();
  if (!parse_number(guid_text, 16, &guid)) return "bad switch GUID";
  out->guid = guid;
  out->lid = static_cast<topology::Lid>(lid);
  out->name.clear();
  if (space != std::string::npos) {
    const auto open = rest.find('(', space);
    const auto end = rest.rfind(')');
    if (open != std::string::npos && end != std::string::npos && end > open)
      out->name = rest.substr(open + 1, end - open - 1);
  }
  return "";
}

DumpedSwitches::DumpedSwitches(const topology::Fabric& fabric)
    : fabric_(fabric), seen_(fabric.nodes.size(), 0) {
  for (std::size_t n = 0; n < fabric.nodes.size(); ++n) {
    by_guid_[fabric.nodes[n].guid] = static_cast<int>(n);
    by_guid_[fabric.nodes[n].port_guid] = static_cast<int>(n);
  }
}

int DumpedSwitches::claim(topology::Guid guid, int line, const std::string& what) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%016" PRIx64, static_cast<std::uint64_t>(guid));
  const std::string where = what + " of line " + std::to_string(line) + " (guid " + text + ")";
  auto it = by_guid_.find(guid);
  if (it == by_guid_.end()) throw DumpError(where + ": no such node in the fabric");
  const int node = it->second;
  if (!fabric_.nodes[node].is_switch) throw DumpError(where + ": not a switch");
  if (seen_[node]) throw DumpError(where + ": switch dumped twice");
  seen_[node] = 1;
  return node;
}

}  // namespace laas::routing::dump

#include "export/partitions.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

#include "export/names.h"

namespace laas::exports {

namespace {

constexpr const char* kFormat = "partitions.conf";

std::string trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// A number as OpenSM's file accepts one: 0x-prefixed hex or decimal.
std::optional<unsigned long long> parse_number(const std::string& s) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    const auto d = s.substr(2);
    if (d.size() > 16 || !std::all_of(d.begin(), d.end(), is_hex)) return std::nullopt;
    return std::stoull(d, nullptr, 16);
  }
  if (s.empty() || s.size() > 19 || !std::all_of(s.begin(), s.end(), is_digit)) return std::nullopt;
  return std::stoull(s);
}

const char* membership_text(Membership m) {
  switch (m) {
    case Membership::kFull:
      return "full";
    case Membership::kLimited:
      return "limited";
    case Membership::kBoth:
      return "both";
  }
  return "limited";
}

bool is_mgroup_flag(const std::string& key) {
  static const char* keys[] = {"rate", "mtu", "sl", "scope", "q_key", "tclass", "flowlabel"};
  return std::find(std::begin(keys), std::end(keys), key) != std::end(keys);
}

struct Checker {
  PartitionsCheck out;

  void error(int line, std::string msg) { out.diagnostics.push_back({line, true, std::move(msg)}); }
  void warn(int line, std::string msg) { out.diagnostics.push_back({line, false, std::move(msg)}); }

  // Returns true when `item` (key=value) was a flag that is valid in a definition or between
  // the ':' sections: ipoib, indx0, defmember=..., mgroup flags.
  bool flag(const std::string& item, int line) {
    const auto eq = item.find('=');
    const std::string key = lower(trim(item.substr(0, eq)));
    const std::string value = eq == std::string::npos ? "" : trim(item.substr(eq + 1));
    if (eq == std::string::npos) return key == "ipoib" || key == "indx0";
    if (key == "defmember") {
      if (value != "full" && value != "limited" && value != "both")
        error(line, "defmember must be full, limited or both, not '" + value + "'");
      return true;
    }
    if (is_mgroup_flag(key)) {
      if (!parse_number(value))
        error(line, "flag '" + key + "' needs a number (decimal or 0x hex), not '" + value + "'");
      return true;
    }
    return false;
  }

  void definition(const std::string& text, int line) {
    std::vector<std::string> items;
    std::size_t start = 0;
    for (;;) {
      const auto comma = text.find(',', start);
      items.push_back(trim(text.substr(start, comma - start)));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    PartitionEntry entry;
    entry.line = line;
    const auto eq = items[0].find('=');
    entry.name = trim(items[0].substr(0, eq));
    if (entry.name.find_first_of(" \t") != std::string::npos)
      warn(line, "partition name '" + entry.name + "' contains white space");
    if (entry.name.size() > kMaxPartitionName)
      warn(line, "partition name '" + entry.name + "' is longer than " +
                     std::to_string(kMaxPartitionName) + " characters; OpenSM keeps only " +
                     std::to_string(kMaxPartitionName));
    if (eq != std::string::npos) {
      const std::string pk = trim(items[0].substr(eq + 1));
      const auto v = parse_number(pk);
      if (!v || *v > 0xffff)
        error(line, "P_Key '" + pk + "' is not a 16-bit number (decimal or 0x hex)");
      else if ((*v & 0x7fff) == 0)
        error(line, "P_Key '" + pk + "' is invalid: its low 15 bits are zero");
      else
        entry.pkey = static_cast<std::uint16_t>(*v & 0x7fff);
    }
    for (std::size_t i = 1; i < items.size(); ++i) {
      if (items[i].empty())
        error(line, "empty flag between ',' in the partition definition");
      else if (!flag(items[i], line))
        warn(line, "unrecognized partition flag '" + items[i] + "'; OpenSM ignores it");
    }
    for (const auto& p : out.partitions)
      if (entry.pkey && p.pkey == entry.pkey && p.name != entry.name)
        warn(line, "P_Key 0x" + hex4(*entry.pkey) + " is also used by partition '" + p.name +
                       "' (line " + std::to_string(p.line) + "); OpenSM merges them");
    out.partitions.push_back(std::move(entry));
  }

  static std::string hex4(std::uint16_t v) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%04x", v);
    return buf;
  }

  void member(const std::string& item, int line) {
    if (lower(item.substr(0, 4)) == "mgid") {
      const auto eq = item.find('=');
      const std::string gid = eq == std::string::npos ? "" : trim(item.substr(eq + 1));
      const bool gid_chars = !gid.empty() && std::all_of(gid.begin(), gid.end(), [](char c) {
        return is_hex(c) || c == ':';
      });
      if (eq == std::string::npos || trim(item.substr(0, eq)) != "mgid" || !gid_chars ||
          gid.find(':') == std::string::npos)
        error(line, "'" + item + "' is not mgid=<GID> with an IPv6-style GID");
      else if (lower(gid.substr(0, 2)) != "ff")
        error(line, "mgid '" + gid + "' is not a multicast GID (must start with ff)");
      return;
    }
    if (flag(item, line)) return;
    const auto eq = item.find('=');
    const std::string port = trim(item.substr(0, eq));
    static const char* keywords[] = {"ALL", "ALL_CAS", "ALL_SWITCHES", "ALL_ROUTERS", "SELF"};
    const bool keyword =
        std::find(std::begin(keywords), std::end(keywords), port) != std::end(keywords);
    if (!keyword) {
      const auto guid = parse_number(port);
      if (!guid)
        error(line, "member '" + port +
                        "' is neither a port GUID (0x hex or decimal) nor one of ALL, ALL_CAS, "
                        "ALL_SWITCHES, ALL_ROUTERS, SELF");
      else if (*guid == 0)
        error(line, "member GUID 0 is not a port GUID");
    }
    if (eq != std::string::npos) {
      const std::string m = trim(item.substr(eq + 1));
      if (m != "full" && m != "limited" && m != "both")
        warn(line, "membership '" + m + "' of '" + port +
                       "' is not full, limited or both; OpenSM makes it a limited member");
    }
  }

  // chars/lines of one statement, without its ';'.
  void statement(const std::string& s, const std::vector<int>& lines, bool terminated) {
    std::size_t first = 0;
    while (first < s.size() && std::isspace(static_cast<unsigned char>(s[first]))) ++first;
    if (first == s.size()) {
      if (terminated) warn(lines.empty() ? 0 : lines.back(), "empty statement ';'");
      return;
    }
    const int line = lines[first];
    if (!terminated) {
      error(line, "statement is not terminated by ';' before the end of the file");
      return;
    }
    const auto colon = s.find(':');
    if (colon == std::string::npos) {
      error(line, "no ':' between the partition definition and its members");
      return;
    }
    definition(s.substr(0, colon), line);
    // Members, split on ',', ':' and newlines; an mgid's GID keeps its ':'.
    std::string item;
    int item_line = lines[colon];
    char prev_sep = ':';
    auto finish = [&](char sep, int at) {
      const std::string t = trim(item);
      item.clear();
      if (t.empty()) {
        if (sep == '\n') return;  // a line break inside the member list
        if (sep == ',')
          error(at, "empty member before ','");
        else if (prev_sep == ',' && sep == ';')
          warn(at, "',' before ';' (empty last member)");
        else if (prev_sep == ',')
          error(at, "empty member between ',' and ':'");
      } else {
        member(t, item_line);
      }
      prev_sep = sep;
    };
    for (std::size_t i = colon + 1; i < s.size(); ++i) {
      const char c = s[i];
      const bool in_mgid =
          lower(trim(item).substr(0, 5)) == "mgid=" ||
          (lower(trim(item).substr(0, 4)) == "mgid" && item.find('=') != std::string::npos);
      if (c == ',' || c == '\n' || (c == ':' && !in_mgid)) {
        finish(c, lines[i]);
        item_line = i + 1 < lines.size() ? lines[i + 1] : lines[i];
        continue;
      }
      if (trim(item).empty() && !std::isspace(static_cast<unsigned char>(c))) item_line = lines[i];
      item += c;
    }
    finish(';', lines.empty() ? line : lines.back());
  }
};

}  // namespace

bool PartitionsCheck::ok() const {
  return std::none_of(diagnostics.begin(), diagnostics.end(),
                      [](const PartitionsDiagnostic& d) { return d.error; });
}

std::string PartitionsCheck::report(std::string_view file) const {
  std::string out;
  for (const auto& d : diagnostics)
    out += std::string(file) + ":" + std::to_string(d.line) + ": " +
           (d.error ? "error: " : "warning: ") + d.message + "\n";
  return out;
}

PartitionsCheck validate_partitions(std::string_view text) {
  Checker checker;
  std::string stmt;
  std::vector<int> lines;
  int line = 1;
  bool comment = false;
  for (char c : text) {
    if (c == '\n') {
      comment = false;
      stmt += '\n';
      lines.push_back(line);
      ++line;
      continue;
    }
    if (comment) continue;
    if (c == '#') {
      comment = true;
      continue;
    }
    if (c == ';') {
      checker.statement(stmt, lines, true);
      stmt.clear();
      lines.clear();
      continue;
    }
    if (c == '\0' || (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\r')) {
      checker.error(line, "control character in the file");
      continue;
    }
    stmt += c;
    lines.push_back(line);
  }
  checker.statement(stmt, lines, false);
  std::stable_sort(checker.out.diagnostics.begin(), checker.out.diagnostics.end(),
                   [](const auto& a, const auto& b) { return a.line < b.line; });
  return std::move(checker.out);
}

std::uint16_t pkey_hash(std::string_view name) {
  std::uint32_t h = 2166136261u;
  for (char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  return static_cast<std::uint16_t>(1 + h % 0x7ffe);
}

std::vector<std::uint16_t> assign_pkeys(const std::vector<TenantRecord>& tenants,
                                        const std::set<std::uint16_t>& reserved) {
  std::vector<std::uint16_t> out(tenants.size(), 0);
  std::map<std::uint16_t, std::string> taken;
  for (std::size_t i = 0; i < tenants.size(); ++i) {
    const auto& t = tenants[i];
    if (!t.pkey) continue;
    const std::string subject = "tenant '" + t.name + "'";
    const auto pk = *t.pkey;
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%04x", pk);
    if (pk < 1 || pk > 0x7ffe)
      throw ExportError(kFormat, subject,
                        std::string("P_Key ") + buf + " is outside 0x0001..0x7ffe");
    if (reserved.count(pk))
      throw ExportError(kFormat, subject,
                        std::string("P_Key ") + buf + " is already used by the base file");
    if (auto it = taken.find(pk); it != taken.end())
      throw ExportError(kFormat, subject,
                        std::string("P_Key ") + buf + " is also tenant '" + it->second + "''s");
    taken[pk] = t.name;
    out[i] = pk;
  }
  for (std::size_t i = 0; i < tenants.size(); ++i) {
    if (tenants[i].pkey) continue;
    std::uint16_t pk = pkey_hash(tenants[i].name);
    for (int tries = 0; reserved.count(pk) || taken.count(pk); ++tries) {
      if (tries >= 0x7ffe)
        throw ExportError(kFormat, "tenant '" + tenants[i].name + "'", "no free P_Key is left");
      pk = static_cast<std::uint16_t>(pk % 0x7ffe + 1);
    }
    taken[pk] = tenants[i].name;
    out[i] = pk;
  }
  return out;
}

namespace {

// The base text without an earlier generated block, trailing blank lines removed.
std::string strip_generated(const std::string& base, const std::string& base_name) {
  std::istringstream in(base);
  std::string line, out;
  int n = 0, begin_line = 0;
  bool inside = false;
  while (std::getline(in, line)) {
    ++n;
    const std::string t = trim(line);
    if (t.rfind(kBeginMarker, 0) == 0) {
      if (inside)
        throw ExportError(kFormat, base_name + ":" + std::to_string(n),
                          "second LaaS BEGIN marker inside a generated block");
      inside = true;
      begin_line = n;
      continue;
    }
    if (t.rfind(kEndMarker, 0) == 0) {
      if (!inside)
        throw ExportError(kFormat, base_name + ":" + std::to_string(n),
                          "LaaS END marker without a BEGIN marker");
      inside = false;
      continue;
    }
    if (!inside) out += line + "\n";
  }
  if (inside)
    throw ExportError(kFormat, base_name + ":" + std::to_string(begin_line),
                      "LaaS BEGIN marker without an END marker");
  while (!out.empty() && std::isspace(static_cast<unsigned char>(out.back()))) out.pop_back();
  return out;
}

std::string member_port(const ManagementMember& m) {
  const std::string subject = "management port '" + m.port + "'";
  if (m.port == "SELF" || m.port == "ALL_SWITCHES" || m.port == "ALL_ROUTERS") return m.port;
  if (m.port == "ALL" || m.port == "ALL_CAS")
    throw ExportError(kFormat, subject, "would make every host a member of every tenant partition");
  return guid_hex(parse_guid(m.port, kFormat, subject));
}

}  // namespace

std::string generate_partitions(const std::vector<TenantRecord>& tenants,
                                const PartitionOptions& options) {
  std::string base;
  std::set<std::uint16_t> reserved = {0x7fff};
  bool has_default = false;
  if (options.base_text) {
    base = strip_generated(*options.base_text, options.base_name);
    const auto check = validate_partitions(base);
    for (const auto& d : check.diagnostics)
      if (d.error)
        throw ExportError(kFormat, options.base_name + ":" + std::to_string(d.line), d.message);
    for (const auto& p : check.partitions) {
      if (!p.pkey) continue;
      reserved.insert(*p.pkey);
      if (*p.pkey == 0x7fff) has_default = true;
    }
  }
  std::vector<std::string> management;
  for (const auto& m : options.management)
    management.push_back(member_port(m) + "=" + membership_text(m.membership));

  std::map<Guid, std::string> owner;
  std::set<std::string> names;
  for (const auto& t : tenants) {
    const std::string subject = "tenant '" + t.name + "'";
    const std::size_t room =
        kMaxPartitionName - std::min(kMaxPartitionName, options.name_prefix.size());
    check_name(t.name, std::max<std::size_t>(room, 1), kFormat, subject,
               "tenant name (after the prefix '" + options.name_prefix + "')");
    check_name(options.name_prefix + t.name, kMaxPartitionName, kFormat, subject,
               "partition name '" + options.name_prefix + t.name + "'");
    if (!names.insert(t.name).second) throw ExportError(kFormat, subject, "listed twice");
    for (const auto& h : t.hosts) {
      if (h.guid == 0)
        throw ExportError(kFormat, subject + " host '" + h.name + "'", "port GUID is 0");
      auto [it, fresh] = owner.emplace(h.guid, t.name);
      if (!fresh)
        throw ExportError(
            kFormat, subject + " host '" + h.name + "'",
            "port GUID " + guid_hex(h.guid) + " is also in tenant '" + it->second + "'");
    }
  }
  const auto pkeys = assign_pkeys(tenants, reserved);

  std::vector<std::string> parts;
  if (!base.empty()) parts.push_back(base);
  if (!has_default)
    parts.push_back(std::string("# Default partition added by LaaS (no P_Key 0x7fff rule was "
                                "given)\n") +
                    kDefaultPartition);
  std::string block =
      std::string(kBeginMarker) + " (generated; edits between these markers are overwritten)\n";
  for (std::size_t i = 0; i < tenants.size(); ++i) {
    const auto& t = tenants[i];
    char pk[8];
    std::snprintf(pk, sizeof pk, "0x%04x", pkeys[i]);
    block += "# tenant " + t.name + ": " + std::to_string(t.hosts.size()) + " host" +
             (t.hosts.size() == 1 ? "" : "s") + "\n";
    block += options.name_prefix + t.name + "=" + pk + (options.ipoib ? ", ipoib" : "") + " :";
    std::vector<std::string> members;
    for (const auto& h : t.hosts) members.push_back(guid_hex(h.guid) + "=full");
    members.insert(members.end(), management.begin(), management.end());
    for (std::size_t k = 0; k < members.size(); ++k)
      block += "\n\t" + members[k] + (k + 1 < members.size() ? "," : "");
    block += " ;\n";
  }
  block += kEndMarker;
  parts.push_back(block);

  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "\n\n") + p;
  out += "\n";
  const auto check = validate_partitions(out);
  if (!check.ok())
    throw ExportError(kFormat, "generated text", "does not validate:\n" + check.report("output"));
  return out;
}

}  // namespace laas::exports

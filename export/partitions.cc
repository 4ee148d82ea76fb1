#include "export/partitions.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

#include "export/names.h"
#include "util/text.h"

namespace laas::exports {

namespace {

constexpr const char* kPartitionsFormat = "partitions.conf";

using util::trim;

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

// OpenSM compares words with strncmp(word, keyword, strlen(word)): any prefix of the keyword
// matches, the empty word included.
bool opensm_prefix(std::string_view word, std::string_view keyword) {
  return word.size() <= keyword.size() && keyword.substr(0, word.size()) == word;
}

// A member's "=flag" as partition_add_port() reads it: "f", "fu" and even "" are full.
Membership port_membership(const std::string& flag) {
  if (opensm_prefix(flag, "full")) return Membership::kFull;
  if (opensm_prefix(flag, "both")) return Membership::kBoth;
  return Membership::kLimited;
}

// Keywords that, given full membership, make every port of a kind a full member: every
// member of the partition (a tenant host of the default partition) then reaches them all.
bool opens_to_all(const std::string& port) {
  return port == "ALL" || port == "ALL_CAS" || port == "ALL_SWITCHES";
}

bool is_mgroup_flag(const std::string& key) {
  static const char* keys[] = {"rate", "mtu", "sl", "scope", "q_key", "tclass", "flowlabel"};
  return std::find(std::begin(keys), std::end(keys), key) != std::end(keys);
}

struct Checker {
  PartitionsCheck out;
  Membership defmember = Membership::kLimited;  // of the statement being read

  void error(int line, std::string msg) { out.diagnostics.push_back({line, true, std::move(msg)}); }
  void warn(int line, std::string msg) { out.diagnostics.push_back({line, false, std::move(msg)}); }

  // Returns true when `item` (key=value) is a flag of a definition: ipoib, indx0,
  // defmember=..., mgroup flags.
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

  // partition_add_flag(): "defmember" or any prefix of it (case counts), with a value that is
  // a prefix of full, both or limited, sets the statement's default membership.
  void note_defmember(const std::string& item) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) return;
    const std::string key = trim(item.substr(0, eq)), value = trim(item.substr(eq + 1));
    if (key.empty() || !opensm_prefix(key, "defmember")) return;
    if (opensm_prefix(value, "full"))
      defmember = Membership::kFull;
    else if (opensm_prefix(value, "both"))
      defmember = Membership::kBoth;
    else if (opensm_prefix(value, "limited"))
      defmember = Membership::kLimited;
  }

  void definition(const std::string& text, int line) {
    defmember = Membership::kLimited;
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
    // partition_create(): a name that starts with a digit and has no '=' is the P_Key.
    const bool digit_name =
        eq == std::string::npos && !entry.name.empty() && is_digit(entry.name[0]);
    if (eq != std::string::npos || digit_name) {
      const std::string pk = digit_name ? entry.name : trim(items[0].substr(eq + 1));
      if (digit_name) entry.name.clear();
      const auto v = parse_number(pk);
      if (!v || *v > 0xffff)
        error(line, "P_Key '" + pk + "' is not a 16-bit number (decimal or 0x hex)");
      else if ((*v & 0x7fff) == 0)
        error(line, "P_Key '" + pk + "' is invalid: its low 15 bits are zero");
      else
        entry.pkey = static_cast<std::uint16_t>(*v & 0x7fff);
    }
    for (std::size_t i = 1; i < items.size(); ++i) {
      note_defmember(items[i]);
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

  // A member as partition_add_port() reads it: a keyword or a port GUID, "=membership".
  // Returns true for "mgid=...": OpenSM then takes the rest of the line as that group's flags.
  bool member(const std::string& item, int line) {
    const auto eq = item.find('=');
    const std::string port = trim(item.substr(0, eq));
    if (port == "mgid") {
      const std::string gid = eq == std::string::npos ? "" : trim(item.substr(eq + 1));
      const bool gid_chars = !gid.empty() && std::all_of(gid.begin(), gid.end(), [](char c) {
        return is_hex(c) || c == ':';
      });
      if (!gid_chars || gid.find(':') == std::string::npos)
        error(line, "'" + item + "' is not mgid=<GID> with an IPv6-style GID");
      else if (lower(gid.substr(0, 2)) != "ff")
        error(line, "mgid '" + gid + "' is not a multicast GID (must start with ff)");
      return true;
    }
    if (item.find(':') != std::string::npos) {
      error(line, "':' inside the member list ('" + item +
                      "'): OpenSM reads one ':' per statement, so this is not a port");
      return false;
    }
    static const char* keywords[] = {"ALL", "ALL_CAS", "ALL_SWITCHES", "ALL_ROUTERS", "SELF"};
    const bool keyword =
        std::find(std::begin(keywords), std::end(keywords), port) != std::end(keywords);
    if (!keyword) {
      const auto guid = parse_number(port);
      if (flag_key(port))
        error(line, "'" + item +
                        "' is a partition flag, not a member; OpenSM reads flags only before "
                        "the ':' (or after an mgid= on its line)");
      else if (!guid)
        error(line, "member '" + port +
                        "' is neither a port GUID (0x hex or decimal) nor one of ALL, ALL_CAS, "
                        "ALL_SWITCHES, ALL_ROUTERS, SELF");
      else if (*guid == 0)
        error(line, "member GUID 0 is not a port GUID");
    }
    const std::string flag = eq == std::string::npos ? "" : trim(item.substr(eq + 1));
    if (eq != std::string::npos && flag != "full" && flag != "limited" && flag != "both")
      warn(line, "membership '" + flag + "' of '" + port +
                     "' is not full, limited or both; OpenSM reads it as " +
                     membership_text(port_membership(flag)));
    const Membership m = eq == std::string::npos ? defmember : port_membership(flag);
    if (m != Membership::kLimited && opens_to_all(port) && !out.partitions.empty())
      error(line,
            everyone_full(port,
                          eq == std::string::npos ? port + " (defmember=" + membership_text(m) + ")"
                                                  : trim(item),
                          out.partitions.back()));
    return false;
  }

  // Why `port` (ALL, ALL_CAS, ALL_SWITCHES) as a full member is refused, `written` as the
  // file says it.
  static std::string everyone_full(const std::string& port, const std::string& written,
                                   const PartitionEntry& p) {
    const std::string key = p.pkey ? "0x" + hex4(*p.pkey) : "P_Key chosen by OpenSM";
    const std::string partition = p.name.empty() ? key : p.name + " (" + key + ")";
    const bool switches = port == "ALL_SWITCHES";
    return written + " makes every " + (switches ? "switch's management port" : "port") +
           (port == "ALL_CAS" ? " of a host" : "") + " a full member of partition " + partition +
           (switches ? ": every member, whatever its tenant, could reach the switches' "
                       "management ports (counters, vendor MADs)"
                     : ": tenants could reach each other") +
           "; use " + port + "=limited or list the full members";
  }

  static bool flag_key(const std::string& key) {
    const std::string k = lower(key);
    return k == "ipoib" || k == "indx0" || k == "defmember" || is_mgroup_flag(k);
  }

  // One statement: chars of the file up to (without) its ';', `lines[i]` the line of s[i].
  // OpenSM 3.3.23 (osm_prtn_config.c) reads the file line by line: a new statement's
  // definition and its ':' must be on the line where the statement starts; members may follow
  // on later lines, split by ','; "mgid=GID" consumes the rest of its line as the group's
  // flags; only one ':' is read per statement.
  void statement(const std::string& s, const std::vector<int>& lines, bool terminated) {
    std::size_t first = 0;
    while (first < s.size() && std::isspace(static_cast<unsigned char>(s[first]))) ++first;
    if (first == s.size()) {
      if (terminated) warn(lines.empty() ? 0 : lines.back(), "empty statement ';'");
      return;
    }
    const int line = lines[first];
    const auto colon = s.find(':');
    if (colon == std::string::npos) {
      error(line, "no ':' between the partition definition and its members");
      return;
    }
    if (lines[colon] != line) {
      error(line, "the partition definition is wrapped before its ':' (found on line " +
                      std::to_string(lines[colon]) +
                      "); OpenSM reads a definition and its ':' on one line and rejects this "
                      "('no partition definition found')");
      return;
    }
    if (!terminated) {
      error(line, "statement is not terminated by ';' before the end of the file");
      return;
    }
    definition(s.substr(0, colon), line);
    // Members: items split on ',' and line ends.
    struct Item {
      std::string text;
      int line;
      char sep;  // what ended it: ',', '\n' or ';'
    };
    std::vector<Item> items;
    std::string cur;
    int cur_line = lines[colon];
    for (std::size_t i = colon + 1; i <= s.size(); ++i) {
      const char c = i < s.size() ? s[i] : ';';
      if (c == ',' || c == '\n' || c == ';') {
        items.push_back({trim(cur), cur_line, c});
        cur.clear();
        cur_line = i + 1 < s.size() ? lines[i + 1] : (i < s.size() ? lines[i] : cur_line);
        continue;
      }
      if (trim(cur).empty() && !std::isspace(static_cast<unsigned char>(c))) cur_line = lines[i];
      cur += c;
    }
    int mgid_line = 0;  // the line an mgid= was read on: its rest are group flags
    char prev = ':';
    for (const auto& it : items) {
      if (it.text.empty()) {
        if (it.sep == ',' && mgid_line != it.line)
          error(it.line, "empty member before ','");
        else if (it.sep == ';' && prev == ',' && mgid_line != it.line)
          warn(it.line, "',' before ';' (empty last member)");
      } else if (mgid_line == it.line) {
        const auto eq = it.text.find('=');
        const std::string key = lower(trim(it.text.substr(0, eq)));
        if (is_mgroup_flag(key) && eq != std::string::npos) {
          flag(it.text, it.line);
        } else {
          warn(it.line, "'" + it.text +
                            "' follows an mgid= on the same line: OpenSM reads the rest of an "
                            "mgid= line as the group's flags and ignores it as a member; "
                            "put it on its own line");
        }
      } else if (member(it.text, it.line)) {
        mgid_line = it.line;
      }
      prev = it.sep;
    }
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
  std::size_t column = 0;
  for (char c : text) {
    if (c == '\n') {
      if (column > kMaxPartitionsLine)
        checker.error(line, "line is " + std::to_string(column) +
                                " characters long; OpenSM reads " +
                                std::to_string(kMaxPartitionsLine) + " at a time");
      column = 0;
      comment = false;
      stmt += '\n';
      lines.push_back(line);
      ++line;
      continue;
    }
    ++column;
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
      throw ExportError(kPartitionsFormat, subject,
                        std::string("P_Key ") + buf + " is outside 0x0001..0x7ffe");
    if (reserved.count(pk))
      throw ExportError(kPartitionsFormat, subject,
                        std::string("P_Key ") + buf + " is already used by the base file");
    if (auto it = taken.find(pk); it != taken.end())
      throw ExportError(kPartitionsFormat, subject,
                        std::string("P_Key ") + buf + " is also tenant '" + it->second + "''s");
    taken[pk] = t.name;
    out[i] = pk;
  }
  for (std::size_t i = 0; i < tenants.size(); ++i) {
    if (tenants[i].pkey) continue;
    std::uint16_t pk = pkey_hash(tenants[i].name);
    for (int tries = 0; reserved.count(pk) || taken.count(pk); ++tries) {
      if (tries >= 0x7ffe)
        throw ExportError(kPartitionsFormat, "tenant '" + tenants[i].name + "'",
                          "no free P_Key is left");
      pk = static_cast<std::uint16_t>(pk % 0x7ffe + 1);
    }
    taken[pk] = tenants[i].name;
    out[i] = pk;
  }
  return out;
}

namespace {

// The base text without an earlier generated block, trailing blank lines removed. `blank`:
// dropped lines are left empty instead, so that the validator's line numbers are the file's.
std::string strip_generated(const std::string& base, const std::string& base_name,
                            bool blank = false) {
  std::istringstream in(base);
  std::string line, out;
  int n = 0, begin_line = 0;
  bool inside = false, own_default = false, in_own_default = false;
  while (std::getline(in, line)) {
    ++n;
    const std::string t = trim(line);
    bool keep = false, comment = false;
    if (t.rfind(kBeginMarker, 0) == 0) {
      if (inside)
        throw ExportError(kPartitionsFormat, base_name + ":" + std::to_string(n),
                          "second LaaS BEGIN marker inside a generated block");
      inside = true;
      begin_line = n;
    } else if (t.rfind(kEndMarker, 0) == 0) {
      if (!inside)
        throw ExportError(kPartitionsFormat, base_name + ":" + std::to_string(n),
                          "LaaS END marker without a BEGIN marker");
      inside = false;
    } else if (!inside && t.rfind(kDefaultComment, 0) == 0) {
      // The default partition LaaS added itself (one line after its comment) is regenerated:
      // its management and shared-service members follow the fabric.
      comment = true;
    } else if (own_default && t.rfind("Default=", 0) == 0) {
      // dropped with its comment, up to the ';' that ends it (its members may follow on lines
      // of their own)
      in_own_default = t.back() != ';';
    } else if (in_own_default) {
      in_own_default = t.empty() || t.back() != ';';
    } else {
      keep = !inside;
    }
    own_default = comment;
    if (keep)
      out += line + "\n";
    else if (blank)
      out += "\n";
  }
  if (inside)
    throw ExportError(kPartitionsFormat, base_name + ":" + std::to_string(begin_line),
                      "LaaS BEGIN marker without an END marker");
  while (!out.empty() && std::isspace(static_cast<unsigned char>(out.back()))) out.pop_back();
  return out;
}

std::string member_port(const ManagementMember& m) {
  const std::string subject = "management port '" + m.port + "'";
  if (m.port == "ALL_SWITCHES" && m.membership != Membership::kLimited)
    throw ExportError(kPartitionsFormat, subject,
                      "would make every switch's management port a full member of every tenant "
                      "partition");
  if (m.port == "SELF" || m.port == "ALL_SWITCHES" || m.port == "ALL_ROUTERS") return m.port;
  if (m.port == "ALL" || m.port == "ALL_CAS")
    throw ExportError(kPartitionsFormat, subject,
                      "would make every host a member of every tenant partition");
  return guid_hex(parse_guid(m.port, kPartitionsFormat, subject));
}

}  // namespace

std::set<std::uint16_t> base_reserved_pkeys(std::string_view base_text,
                                            const std::string& base_name) {
  const std::string base = strip_generated(std::string(base_text), base_name, true);
  const auto check = validate_partitions(base);
  for (const auto& d : check.diagnostics)
    if (d.error)
      throw ExportError(kPartitionsFormat, base_name + ":" + std::to_string(d.line), d.message);
  std::set<std::uint16_t> reserved = {0x7fff};
  std::set<std::string> unnumbered;
  std::size_t anonymous = 0;
  for (const auto& p : check.partitions) {
    if (p.pkey)
      reserved.insert(*p.pkey);
    else if (p.name.empty())
      ++anonymous;
    else
      unnumbered.insert(p.name);
  }
  std::size_t automatic = unnumbered.size() + anonymous;
  for (std::uint16_t k = 1; automatic > 0 && k < 0x7fff; ++k)
    if (reserved.insert(k).second) --automatic;
  return reserved;
}

std::string generate_partitions(const std::vector<TenantRecord>& tenants,
                                const PartitionOptions& options) {
  std::string base;
  std::set<std::uint16_t> reserved = {0x7fff};
  std::set<std::string> base_names;
  bool has_default = false;
  if (options.base_text) {
    base = strip_generated(*options.base_text, options.base_name);
    reserved = base_reserved_pkeys(*options.base_text, options.base_name);
    for (const auto& p : validate_partitions(base).partitions) {
      base_names.insert(p.name);
      if (p.pkey && *p.pkey == 0x7fff) has_default = true;
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
    check_name(t.name, std::max<std::size_t>(room, 1), kPartitionsFormat, subject,
               "tenant name (after the prefix '" + options.name_prefix + "')");
    check_name(options.name_prefix + t.name, kMaxPartitionName, kPartitionsFormat, subject,
               "partition name '" + options.name_prefix + t.name + "'");
    if (base_names.count(options.name_prefix + t.name))
      throw ExportError(
          kPartitionsFormat, subject,
          "partition name '" + options.name_prefix + t.name + "' is also in " + options.base_name);
    if (!names.insert(t.name).second) throw ExportError(kPartitionsFormat, subject, "listed twice");
    for (const auto& h : t.hosts) {
      if (h.guid == 0)
        throw ExportError(kPartitionsFormat, subject + " host '" + h.name + "'", "port GUID is 0");
      auto [it, fresh] = owner.emplace(h.guid, t.name);
      if (!fresh)
        throw ExportError(
            kPartitionsFormat, subject + " host '" + h.name + "'",
            "port GUID " + guid_hex(h.guid) + " is also in tenant '" + it->second + "'");
    }
  }
  const auto pkeys = assign_pkeys(tenants, reserved);

  std::vector<std::string> parts;
  if (!base.empty()) parts.push_back(base);
  if (!has_default) {
    // Management hosts and shared services (storage, login) serve everyone in the default
    // partition too: without them there, ALL_CAS=limited would cut them off.
    // One member a line after the fixed ones: an open free pool or many shared services make
    // hundreds, and OpenSM reads a line of at most kMaxPartitionsLine characters.
    std::string def = kDefaultPartition;
    std::string extra;
    for (const auto& m : management)
      if (m.rfind("SELF=", 0) != 0) extra += ",\n\t" + m;
    def.insert(def.rfind(" ;"), extra);
    parts.push_back(std::string(kDefaultComment) + " (no P_Key 0x7fff rule was given)\n" + def);
  }
  std::string block =
      std::string(kBeginMarker) + " (generated; edits between these markers are overwritten)\n";
  for (std::size_t i = 0; i < tenants.size(); ++i) {
    const auto& t = tenants[i];
    char pk[8];
    std::snprintf(pk, sizeof pk, "0x%04x", pkeys[i]);
    block += "# tenant " + t.name + ": " + std::to_string(t.hosts.size()) + " host" +
             (t.hosts.size() == 1 ? "" : "s") + "\n";
    // Definition and ':' on one line: OpenSM reads the file line by line.
    block += options.name_prefix + t.name + "=" + pk + (options.ipoib ? ", ipoib" : "") +
             (options.indx0 ? ", indx0" : "") + " :";
    std::vector<std::string> members;
    for (const auto& h : t.hosts) members.push_back(guid_hex(h.guid) + "=full");
    if (!options.indx0) members.insert(members.end(), management.begin(), management.end());
    for (std::size_t k = 0; k < members.size(); ++k)
      block += "\n\t" + members[k] + (k + 1 < members.size() ? "," : "");
    block += " ;\n";
    // indx0 applies to every port of its statement: management ports, members of every tenant
    // partition, get theirs from a second statement of the same P_Key (OpenSM merges them).
    if (options.indx0 && !management.empty()) {
      block += options.name_prefix + t.name + "=" + pk + " :";
      for (std::size_t k = 0; k < management.size(); ++k)
        block += "\n\t" + management[k] + (k + 1 < management.size() ? "," : "");
      block += " ;\n";
    }
  }
  block += kEndMarker;
  parts.push_back(block);

  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "\n\n") + p;
  out += "\n";
  const auto check = validate_partitions(out);
  if (!check.ok())
    throw ExportError(kPartitionsFormat, "generated text",
                      "does not validate:\n" + check.report("output"));
  return out;
}

}  // namespace laas::exports

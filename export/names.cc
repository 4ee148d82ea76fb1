#include "export/names.h"

#include <algorithm>
#include <tuple>

#include "export/records.h"

namespace laas::exports {

namespace {

bool plain(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

std::string describe(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u < 0x20 || u == 0x7f) {
    static const char* hex = "0123456789abcdef";
    return std::string("control character 0x") + hex[u >> 4] + hex[u & 15];
  }
  if (c == ' ') return "a space";
  if (u >= 0x80) return "a non-ASCII byte";
  return std::string("'") + c + "'";
}

}  // namespace

void check_name(std::string_view value, std::size_t max_len, const std::string& format,
                const std::string& subject, const std::string& what, std::string_view extra) {
  if (value.empty()) throw ExportError(format, subject, what + " is empty");
  if (value.size() > max_len)
    throw ExportError(format, subject,
                      what + " is " + std::to_string(value.size()) + " characters long; " + format +
                          " allows at most " + std::to_string(max_len));
  for (char c : value)
    if (!plain(c) && extra.find(c) == std::string_view::npos)
      throw ExportError(format, subject,
                        what + " contains " + describe(c) + "; " + format +
                            " names may use only letters, digits, '.', '_' and '-'" +
                            (extra.empty() ? "" : " and '" + std::string(extra) + "'"));
  if (value.front() == '-' || value.front() == '.')
    throw ExportError(format, subject,
                      what + " starts with '" + value.front() + "'; it must start with a letter, " +
                          "digit or '_'");
}

void check_tenant_name(std::string_view name) {
  const std::string subject = "tenant '" + std::string(name) + "'";
  if (name.size() > kMaxTenantName)
    throw ExportError("LaaS", subject,
                      "is " + std::to_string(name.size()) + " characters long; at most " +
                          std::to_string(kMaxTenantName) +
                          " fit its OpenSM partition name (laas_<name>, 31 characters)");
  check_name(name, kMaxTenantName, "LaaS", subject, "the tenant name");
}

std::string host_of_description(std::string_view d) {
  std::size_t b = 0;
  while (b < d.size() && (d[b] == ' ' || d[b] == '\t')) ++b;
  std::size_t e = b;
  while (e < d.size() && d[e] != ' ' && d[e] != '\t') ++e;
  return std::string(d.substr(b, e - b));
}

std::string shell_quote(std::string_view word) {
  const bool safe = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return plain(c) || c == '/' || c == '=' || c == ':' || c == ',' || c == '@' || c == '+';
  });
  if (safe) return std::string(word);
  std::string out = "'";
  for (char c : word) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string mapped(const std::map<std::string, std::string>& map, const std::string& name) {
  auto it = map.find(name);
  return it == map.end() ? name : it->second;
}

std::string compress_hostlist(std::vector<std::string> names) {
  struct Parsed {
    std::string prefix;
    int width = 0;  // digits when zero-padded, 0 when not padded, -1 when no numeric suffix
    unsigned long long number = 0;
    std::string name;
  };
  std::vector<Parsed> parsed;
  for (auto& n : names) {
    std::size_t i = n.size();
    while (i > 0 && n[i - 1] >= '0' && n[i - 1] <= '9') --i;
    Parsed p;
    p.name = n;
    const std::size_t digits = n.size() - i;
    if (digits == 0 || digits > 18) {
      p.prefix = n;
      p.width = -1;
    } else {
      p.prefix = n.substr(0, i);
      p.number = std::stoull(n.substr(i));
      p.width = (n[i] == '0' && digits > 1) ? static_cast<int>(digits) : 0;
    }
    parsed.push_back(std::move(p));
  }
  auto key = [](const Parsed& p) { return std::tie(p.prefix, p.width, p.number, p.name); };
  std::sort(parsed.begin(), parsed.end(),
            [&](const Parsed& a, const Parsed& b) { return key(a) < key(b); });
  parsed.erase(std::unique(parsed.begin(), parsed.end(),
                           [](const Parsed& a, const Parsed& b) { return a.name == b.name; }),
               parsed.end());
  auto num = [](const Parsed& p, unsigned long long v) {
    std::string s = std::to_string(v);
    if (p.width > 0 && static_cast<int>(s.size()) < p.width)
      s.insert(0, static_cast<std::size_t>(p.width) - s.size(), '0');
    return s;
  };
  std::string out;
  for (std::size_t i = 0; i < parsed.size();) {
    std::size_t j = i;
    while (j < parsed.size() && parsed[j].prefix == parsed[i].prefix &&
           parsed[j].width == parsed[i].width)
      ++j;
    if (!out.empty()) out += ',';
    if (parsed[i].width < 0 || j - i == 1) {
      for (std::size_t k = i; k < j; ++k) out += (k > i ? "," : "") + parsed[k].name;
    } else {
      std::string ranges;
      for (std::size_t k = i; k < j;) {
        std::size_t e = k;
        while (e + 1 < j && parsed[e + 1].number == parsed[e].number + 1) ++e;
        if (!ranges.empty()) ranges += ',';
        ranges += num(parsed[k], parsed[k].number);
        if (e > k) ranges += "-" + num(parsed[e], parsed[e].number);
        k = e + 1;
      }
      out += parsed[i].prefix + "[" + ranges + "]";
    }
    i = j;
  }
  return out;
}

}  // namespace laas::exports

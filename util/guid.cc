#include "util/guid.h"

#include <cstdio>
#include <stdexcept>
#include <string>

namespace laas::util {

std::optional<std::uint64_t> parse_guid(std::string_view text) {
  if (text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
    text.remove_prefix(2);
  if (text.empty() || text.size() > 16) return std::nullopt;
  std::uint64_t value = 0;
  for (char c : text) {
    int digit;
    if (c >= '0' && c <= '9')
      digit = c - '0';
    else if (c >= 'a' && c <= 'f')
      digit = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      digit = c - 'A' + 10;
    else
      return std::nullopt;
    value = value << 4 | static_cast<std::uint64_t>(digit);
  }
  return value;
}

std::uint64_t guid_or_throw(std::string_view text) {
  if (auto guid = parse_guid(text)) return *guid;
  throw std::invalid_argument("'" + std::string(text) + "' is not a GUID (" + kGuidGrammar + ")");
}

std::string guid_hex(std::uint64_t guid) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(guid));
  return buf;
}

}  // namespace laas::util

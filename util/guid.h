// The one GUID grammar of every file, request and command: an optional "0x" (or "0X") and
// 1 to 16 hexadecimal digits, nothing else. "1234" is 0x1234 wherever it is written: laas.yaml,
// tenants.yaml, state.json, allocations.json, requests and laasctl arguments alike. Decimal and
// octal readings are never tried, so one text never names two ports.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace laas::util {

inline constexpr const char* kGuidGrammar = "an optional 0x and 1 to 16 hex digits";

// The GUID `text` spells, or nothing when it does not follow the grammar.
std::optional<std::uint64_t> parse_guid(std::string_view text);
// As parse_guid, but throws std::invalid_argument naming the text and the grammar.
std::uint64_t guid_or_throw(std::string_view text);
// As written everywhere: 0x and 16 lower-case hex digits.
std::string guid_hex(std::uint64_t guid);

}  // namespace laas::util

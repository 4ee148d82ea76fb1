#include "api/events.h"

namespace laas::api {

using nlohmann::json;

namespace {

// A position: parsed from the socket's text it is unsigned, built in code it may be signed.
bool is_position(const json& v) {
  return v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0);
}

}  // namespace

std::string sse_frames(const json& result) {
  std::string out;
  if (!result.is_object()) return ": no answer\n\n";
  if (result.value("lost", false))
    out += "event: lost\ndata: " + json({{"next", result.value("next", json())}}).dump() + "\n\n";
  const json events = result.value("events", json::array());
  for (const auto& e : events) {
    if (!e.is_object()) continue;
    // dump() escapes newlines: one data line per event, as SSE wants.
    if (e.contains("seq") && is_position(e["seq"]))
      out += "id: " + std::to_string(e["seq"].get<std::uint64_t>()) + "\n";
    const json type = e.value("type", json("change"));
    const bool plain =
        type.is_string() && type.get<std::string>().find_first_of("\r\n") == std::string::npos;
    out += "event: " + (plain ? type.get<std::string>() : std::string("change")) + "\n";
    out += "data: " + e.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n";
  }
  if (out.empty()) out = ": waiting\n\n";
  return out;
}

std::optional<std::uint64_t> next_position(const json& result) {
  if (!result.is_object() || !result.contains("next") || !is_position(result["next"]))
    return std::nullopt;
  return result["next"].get<std::uint64_t>();
}

}  // namespace laas::api

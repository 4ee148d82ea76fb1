// laas-api's request mapping (api/routes.h) on arbitrary requests: byte 0 picks the HTTP method,
// byte 1 the role; then the path up to a newline, the query ("k=v&k=v") up to the next, and the
// body. Every answer must be a JSON error with a status the API gives, or a socket request of
// the route found (a change only for a writer) whose parameters are a JSON object; the body is
// also fed back as the socket's reply, whose answer must be JSON too. Every JSON must dump
// (strictly: bytes that are not UTF-8 would throw).
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

#include "api/routes.h"

using namespace laas::api;
using nlohmann::json;

namespace {

std::string take_line(std::string& rest) {
  const size_t end = rest.find('\n');
  std::string line = rest.substr(0, end);
  rest = end == std::string::npos ? "" : rest.substr(end + 1);
  return line;
}

std::multimap<std::string, std::string> parse_query(const std::string& text) {
  std::multimap<std::string, std::string> query;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('&', start);
    if (end == std::string::npos) end = text.size();
    const std::string pair = text.substr(start, end - start);
    const size_t eq = pair.find('=');
    query.emplace(pair.substr(0, eq), eq == std::string::npos ? "" : pair.substr(eq + 1));
    start = end + 1;
  }
  return query;
}

void check_answer(const HttpReply& r) {
  static const std::set<int> statuses = {200, 201, 400, 403, 404, 405,
                                         409, 413, 500, 502, 503, 504};
  if (!statuses.count(r.status)) std::abort();
  if (r.status >= 400 && (!r.body.contains("error") || !r.body["error"]["code"].is_string() ||
                          !r.body["error"]["message"].is_string()))
    std::abort();
  (void)r.body.dump();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  if (size < 2) return 0;
  static const char* const methods[] = {"GET", "POST", "DELETE", "PUT", "PATCH"};
  const std::string method = methods[data[0] % 5];
  const Role role = static_cast<Role>(data[1] % 3);
  std::string rest(reinterpret_cast<const char*>(data + 2), size - 2);
  const std::string path = take_line(rest);
  const auto query = parse_query(take_line(rest));
  const Mapped m = map_request(method, path, query, rest, role, MapOptions{});
  if (m.error) {
    check_answer(*m.error);
    return 0;
  }
  if (!m.route || m.method != m.route->socket_method || !m.params.is_object()) std::abort();
  if (m.route->writes && role != Role::kWriter) std::abort();
  if (role == Role::kNone) std::abort();
  (void)m.params.dump();
  check_answer(map_reply(m, json::parse(rest, nullptr, false)));
  return 0;
}

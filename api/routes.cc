#include "api/routes.h"

#include <algorithm>
#include <cctype>

#include "service/protocol.h"

namespace laas::api {

using nlohmann::json;
namespace method = service::method;
namespace error = service::error;

Role role_for(const std::string& cn, const std::vector<std::string>& writers,
              const std::vector<std::string>& readers) {
  if (cn.empty()) return Role::kNone;
  if (std::find(writers.begin(), writers.end(), cn) != writers.end()) return Role::kWriter;
  if (std::find(readers.begin(), readers.end(), cn) != readers.end()) return Role::kReader;
  return Role::kNone;
}

const std::vector<Route>& routes() {
  // The bodies take the fields laasctl sends for the same command; "wait" (default true: the
  // reply comes once OpenSM has re-routed) where the service waits. The wait's length is the
  // API's (--wait-ms), not the client's: a client cannot hold a worker longer than that.
  static const std::vector<Route> table = {
      {"GET", "/v1/openapi.json", "", false, false, 200, "", {}, {}},
      {"GET", "/v1/status", method::kStatus, false, false, 200, "", {}, {}},
      {"GET", "/v1/metrics", method::kMetrics, false, false, 200, "", {}, {}},
      {"GET", "/v1/tenants", method::kTenantList, false, false, 200, "", {}, {}},
      {"POST",
       "/v1/tenants",
       method::kTenantAdd,
       true,
       true,
       201,
       "",
       {"name", "hosts", "servers", "host_list", "dry_run", "wait", "slurm_accounts", "slurm_users",
        "openstack_project"},
       {}},
      {"GET", "/v1/tenants/{name}", method::kTenantGet, false, false, 200, "name", {}, {}},
      {"DELETE",
       "/v1/tenants/{name}",
       method::kTenantRemove,
       true,
       true,
       200,
       "name",
       {"dry_run", "wait"},
       {}},
      {"GET", "/v1/hosts", method::kHostList, false, false, 200, "", {}, {"state"}},
      {"GET", "/v1/hosts/{name}", method::kHostGet, false, false, 200, "name", {}, {}},
      {"POST",
       "/v1/hosts/drain",
       method::kHostDrain,
       true,
       false,
       200,
       "",
       {"hosts", "reason"},
       {}},
      {"POST", "/v1/hosts/resume", method::kHostResume, true, false, 200, "", {"hosts"}, {}},
      {"POST",
       "/v1/hosts/accept",
       method::kHostAccept,
       true,
       true,
       200,
       "",
       {"hosts", "dry_run", "wait"},
       {}},
      {"GET", "/v1/links", method::kLinkList, false, false, 200, "", {}, {"state"}},
      {"POST",
       "/v1/links/drain",
       method::kLinkDrain,
       true,
       true,
       200,
       "",
       {"link", "reason", "wait"},
       {}},
      {"POST", "/v1/links/resume", method::kLinkResume, true, true, 200, "", {"link", "wait"}, {}},
      {"GET", "/v1/switches", method::kSwitchList, false, false, 200, "", {}, {"state"}},
      {"POST",
       "/v1/switches/drain",
       method::kSwitchDrain,
       true,
       true,
       200,
       "",
       {"switch", "reason", "wait"},
       {}},
      {"POST",
       "/v1/switches/resume",
       method::kSwitchResume,
       true,
       true,
       200,
       "",
       {"switch", "wait"},
       {}},
      {"GET", "/v1/sm", method::kSmList, false, false, 200, "", {}, {}},
      {"POST", "/v1/sm/accept", method::kSmAccept, true, true, 200, "", {"guid"}, {}},
      {"POST", "/v1/sm/forget", method::kSmForget, true, true, 200, "", {"guid"}, {}},
      // Server-Sent Events (api/events.h): since, or the Last-Event-ID header, resumes.
      {"GET", "/v1/events", method::kEvents, false, false, 200, "", {}, {"since"}},
  };
  return table;
}

HttpReply error_reply(int status, const std::string& code, const std::string& message) {
  HttpReply r;
  r.status = status;
  // A message may quote the request's own bytes (a JSON parser's error names the token it
  // stopped at): bytes that are not UTF-8 become U+FFFD, or no reply could be written at all.
  const std::string text =
      json::parse(json(message).dump(-1, ' ', false, json::error_handler_t::replace))
          .get<std::string>();
  r.body = {{"error", {{"code", code}, {"message", text}}}};
  return r;
}

namespace {

std::vector<std::string> segments(const std::string& path) {
  std::vector<std::string> out;
  size_t start = 1;  // after the leading '/'
  for (;;) {
    const size_t end = path.find('/', start);
    out.push_back(path.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

// Whether `path` matches `pattern`; `value` gets what its {segment} matched.
bool matches(const std::string& pattern, const std::vector<std::string>& path, std::string& value) {
  const auto want = segments(pattern);
  if (want.size() != path.size()) return false;
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i].front() == '{') {
      if (path[i].empty()) return false;
      value = path[i];
    } else if (want[i] != path[i]) {
      return false;
    }
  }
  return true;
}

bool listed(const std::vector<const char*>& names, const std::string& name) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return name == n; });
}

std::string joined(const std::vector<const char*>& names) {
  std::string out;
  for (const char* n : names) out += std::string(out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

// Whether JSON can carry the text (UTF-8): a path or query is percent-decoded bytes, which the
// socket request and the error message must be able to hold.
bool is_utf8(const std::string& text) {
  try {
    (void)json(text).dump();
    return true;
  } catch (const json::type_error&) {
    return false;
  }
}

// Deeper documents are refused before they are built: nothing a route takes nests past 2.
constexpr int kMaxDepth = 32;

struct TooDeep {};

// The JSON object of a body, or the 400 that says why not.
std::optional<HttpReply> parse_body(const Route& route, const std::string& body, json& out) {
  if (body.find_first_not_of(" \t\r\n") == std::string::npos) return std::nullopt;
  if (route.body_fields.empty())
    return error_reply(400, error::kBadRequest,
                       std::string(route.http_method) + " " + route.pattern + " takes no body");
  try {
    out = json::parse(body, [](int depth, json::parse_event_t, json&) {
      if (depth > kMaxDepth) throw TooDeep{};
      return true;
    });
  } catch (const json::exception& e) {  // a parse error, or a number too large (out_of_range)
    return error_reply(400, error::kBadRequest, std::string("the body is not JSON: ") + e.what());
  } catch (const TooDeep&) {
    return error_reply(400, error::kBadRequest,
                       "the body nests deeper than " + std::to_string(kMaxDepth) + " levels");
  }
  if (!out.is_object())
    return error_reply(400, error::kBadRequest, "the body must be a JSON object");
  for (const auto& item : out.items())
    if (!listed(route.body_fields, item.key()))
      return error_reply(400, error::kBadRequest,
                         "unknown field '" + item.key() + "' in the body of " + route.http_method +
                             " " + route.pattern + "; fields: " + joined(route.body_fields));
  return std::nullopt;
}

std::optional<HttpReply> take_query(const Route& route,
                                    const std::multimap<std::string, std::string>& query,
                                    json& params) {
  for (const auto& [key, value] : query) {
    if (!is_utf8(key) || !is_utf8(value))
      return error_reply(400, error::kBadRequest, "a query parameter is not UTF-8");
    if (!listed(route.query_fields, key))
      return error_reply(400, error::kBadRequest,
                         "unknown query parameter '" + key + "' of " + route.http_method + " " +
                             route.pattern + "; parameters: " + joined(route.query_fields));
    if (query.count(key) > 1)
      return error_reply(400, error::kBadRequest, "query parameter '" + key + "' given twice");
    params[key] = value;
  }
  return std::nullopt;
}

// The route for a method and path, or the 404 / 405 that says there is none.
std::optional<HttpReply> find_route(const std::string& http_method, const std::string& path,
                                    const Route*& found, std::string& value) {
  if (!is_utf8(path) || !is_utf8(http_method))
    return error_reply(400, error::kBadRequest, "the path is not UTF-8");
  if (path.empty() || path.front() != '/')
    return error_reply(404, error::kNotFound, "no such resource: '" + path + "'");
  const auto parts = segments(path);
  std::string allow;
  for (const auto& r : routes()) {
    std::string v;
    if (!matches(r.pattern, parts, v)) continue;
    if (http_method == r.http_method) {
      found = &r;
      value = v;
      return std::nullopt;
    }
    if (allow.find(r.http_method) == std::string::npos)
      allow += std::string(allow.empty() ? "" : ", ") + r.http_method;
  }
  if (allow.empty())
    return error_reply(404, error::kNotFound,
                       "no such resource: '" + path + "' (GET /v1/openapi.json lists them)");
  HttpReply r =
      error_reply(405, "method_not_allowed",
                  http_method + " is not allowed on " + path + " (allowed: " + allow + ")");
  r.allow = allow;
  return r;
}

}  // namespace

Mapped map_request(const std::string& http_method, const std::string& path,
                   const std::multimap<std::string, std::string>& query, const std::string& body,
                   Role role, const MapOptions& options) {
  Mapped m;
  const Route* route = nullptr;
  if (body.size() > kMaxBodyBytes) {
    m.error = error_reply(413, "too_large",
                          "the body is " + std::to_string(body.size()) + " bytes; at most " +
                              std::to_string(kMaxBodyBytes) + " are accepted");
    return m;
  }
  if ((m.error = find_route(http_method, path, route, m.path_value))) return m;
  if (role == Role::kNone || (route->writes && role != Role::kWriter)) {
    m.error = error_reply(403, error::kPermission,
                          role == Role::kNone
                              ? "this client certificate's CN is neither a reader nor a writer"
                              : "a reader may not make changes (" + std::string(http_method) + " " +
                                    route->pattern + "): the CN must be a writer");
    return m;
  }
  m.route = route;
  m.method = route->socket_method;
  json body_params = json::object();
  if ((m.error = parse_body(*route, body, body_params))) return m;
  if ((m.error = take_query(*route, query, m.params))) return m;
  if (m.params.contains("since")) {
    // The socket takes a position as a number (a "next" or an event's seq).
    const std::string since = m.params["since"].get<std::string>();
    if (since.empty() || since.size() > 19 ||
        since.find_first_not_of("0123456789") != std::string::npos) {
      m.error = error_reply(400, error::kBadRequest,
                            "since (or Last-Event-ID) '" + since + "' is not an event position");
      return m;
    }
    m.params["since"] = std::stoull(since);
  }
  for (const auto& item : body_params.items()) m.params[item.key()] = item.value();
  if (*route->path_param) m.params[route->path_param] = m.path_value;
  if (route->waits) {
    if (!m.params.contains("wait")) m.params["wait"] = true;
    m.params["timeout_ms"] = options.wait_ms;
  }
  return m;
}

int status_for_error(const std::string& code) {
  static const std::map<std::string, int> statuses = {
      {error::kBadRequest, 400}, {error::kRefused, 409},     {error::kNotFound, 404},
      {error::kDuplicate, 409},  {error::kUnavailable, 503}, {error::kPermission, 403},
      {error::kInternal, 500},   {error::kBusy, 503},        {error::kNotMaster, 503},
  };
  const auto it = statuses.find(code);
  return it == statuses.end() ? 500 : it->second;
}

HttpReply map_reply(const Mapped& request, const json& reply) {
  if (!reply.is_object() || !reply.contains("ok") || !reply["ok"].is_boolean())
    return error_reply(502, error::kInternal, "the LaaS service gave an unreadable reply");
  if (!reply["ok"].get<bool>()) {
    const json err = reply.value("error", json::object());
    const std::string code = err.is_object() && err.contains("code") && err["code"].is_string()
                                 ? err["code"].get<std::string>()
                                 : error::kInternal;
    const std::string message =
        err.is_object() && err.contains("message") && err["message"].is_string()
            ? err["message"].get<std::string>()
            : "the request failed";
    return error_reply(status_for_error(code), code, message);
  }
  HttpReply r;
  r.body = reply.contains("result") ? reply["result"] : json::object();
  r.status = request.route ? request.route->ok_status : 200;
  const bool dry_run = request.params.contains("dry_run") && request.params["dry_run"] == true;
  if (r.status == 201 && dry_run) r.status = 200;
  if (r.status == 201 && request.params.contains("name") && request.params["name"].is_string())
    r.location = "/v1/tenants/" + request.params["name"].get<std::string>();
  return r;
}

HttpReply socket_failure(int exit_status, const std::string& message) {
  if (exit_status == service::kExitTimeout) return error_reply(504, "timeout", message);
  if (exit_status == service::kExitBusy) return error_reply(503, error::kBusy, message);
  return error_reply(503, error::kUnavailable, message);
}

namespace {

std::string percent_encoded(const std::string& text) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

// A query value as text: laasctl sends strings ("state"); anything else as its JSON.
std::string query_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

}  // namespace

std::optional<HttpRequest> http_request_for(const std::string& socket_method, const json& params) {
  const auto& table = routes();
  const auto it = std::find_if(table.begin(), table.end(),
                               [&](const Route& r) { return socket_method == r.socket_method; });
  if (socket_method.empty() || it == table.end() || !params.is_object()) return std::nullopt;
  HttpRequest req;
  req.method = it->http_method;
  std::string path = it->pattern;
  if (*it->path_param) {
    const json value = params.value(it->path_param, json(""));
    path = path.substr(0, path.find('{')) + percent_encoded(query_text(value));
  }
  std::string query;
  json body = json::object();
  for (const auto& item : params.items()) {
    if (listed(it->query_fields, item.key()))
      query += (query.empty() ? "?" : "&") + percent_encoded(item.key()) + "=" +
               percent_encoded(query_text(item.value()));
    else if (listed(it->body_fields, item.key()))
      body[item.key()] = item.value();
  }
  req.target = path + query;
  if (!it->body_fields.empty() && !body.empty()) req.body = body.dump();
  return req;
}

json socket_reply_for(int status, const std::string& body) {
  const json parsed = json::parse(body, nullptr, false);
  if (status >= 200 && status < 300)
    return {{"v", 1}, {"ok", true}, {"result", parsed.is_discarded() ? json(body) : parsed}};
  if (parsed.is_object() && parsed.contains("error") && parsed["error"].is_object())
    return {{"v", 1}, {"ok", false}, {"error", parsed["error"]}};
  // Not the API's own error (a proxy's page, a cut answer): say what came.
  const std::string code = status == 403   ? error::kPermission
                           : status == 404 ? error::kNotFound
                           : status == 503 ? error::kBusy
                           : status >= 500 ? error::kInternal
                                           : error::kBadRequest;
  return {
      {"v", 1},
      {"ok", false},
      {"error", {{"code", code}, {"message", "HTTP " + std::to_string(status) + " from the API"}}}};
}

}  // namespace laas::api

// laas-api's REST routes as pure functions: an HTTP request (method, path, query, body, the
// caller's role) becomes one control-socket request (service/protocol.h), and the socket's reply
// becomes an HTTP status and JSON body. No I/O here: api/server.cc does the TLS and the socket,
// the unit tests (tests/unit/api_routes_test.cc) and the fuzz target
// (tests/fuzz/fuzz_api_routes.cc) drive these functions directly, and the OpenAPI document
// (api/openapi.json) lists exactly routes() (checked by the unit test ApiOpenApi.*).
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace laas::api {

// What a client certificate's subject CN may do (laas-api --writers / --readers).
enum class Role { kNone, kReader, kWriter };

// The role of a certificate CN: writers first (a CN in both lists writes), then readers.
Role role_for(const std::string& cn, const std::vector<std::string>& writers,
              const std::vector<std::string>& readers);

// Bodies larger than this are refused with 413 (laas-api also bounds them before reading).
constexpr std::size_t kMaxBodyBytes = 1024 * 1024;

struct Route {
  const char* http_method;    // GET, POST or DELETE
  const char* pattern;        // "/v1/tenants/{name}": a {segment} matches one path segment
  const char* socket_method;  // the control socket's method; "" for what laas-api serves itself
  bool writes;                // a change: writers only
  bool waits;                 // the service waits for re-routing (wait, timeout_ms)
  int ok_status;              // 200, or 201 for a tenant created
  const char* path_param;     // the socket parameter the {segment} fills ("" if none)
  std::vector<const char*> body_fields;   // JSON body fields accepted (none: no body)
  std::vector<const char*> query_fields;  // query parameters accepted
};

// Every route, in the order the OpenAPI document lists them.
const std::vector<Route>& routes();

struct HttpReply {
  int status = 200;
  nlohmann::json body;
  std::string location;  // a 201's Location header
  std::string allow;     // a 405's Allow header
};

// The JSON error body every failure has: {"error": {"code": ..., "message": ...}}.
HttpReply error_reply(int status, const std::string& code, const std::string& message);

// A request mapped: either a socket request to make (route set, error empty), the API's own
// document (route set, socket_method ""), or an answer to give at once (error set).
struct Mapped {
  const Route* route = nullptr;
  std::string method;  // the socket method
  nlohmann::json params = nlohmann::json::object();
  std::string path_value;  // what {segment} matched (a tenant's name for the Location header)
  std::optional<HttpReply> error;
};

struct MapOptions {
  // How long a change may wait for OpenSM to re-route (the socket's timeout_ms); laas-api
  // waits a second longer for the reply.
  int wait_ms = 30000;
};

// Maps one HTTP request; `path` is decoded, without its query (`query` holds the parameters).
Mapped map_request(const std::string& http_method, const std::string& path,
                   const std::multimap<std::string, std::string>& query, const std::string& body,
                   Role role, const MapOptions& options);

// The HTTP answer for the control socket's reply to a mapped request: the result with the
// route's status (the JSON `laasctl --json` prints), or the error with its status.
HttpReply map_reply(const Mapped& request, const nlohmann::json& socket_reply);

// The HTTP status of a socket error code (service/protocol.h namespace error).
int status_for_error(const std::string& code);

// The answer when the socket could not be used (ctl::ClientError's exit status and message).
HttpReply socket_failure(int exit_status, const std::string& message);

// laasctl --server: the other way round. The HTTP request laas-api maps to a socket request,
// or nullopt when no route serves that socket method (topology, audit, export, tenant.plan).
// Parameters no route field takes are left out (timeout_ms: the API bounds the wait itself).
struct HttpRequest {
  std::string method;  // GET, POST, DELETE
  std::string target;  // path and query, percent-encoded: "/v1/hosts?state=free"
  std::string body;    // "" or a JSON object
};
std::optional<HttpRequest> http_request_for(const std::string& socket_method,
                                            const nlohmann::json& params);

// The socket reply laasctl expects for an HTTP answer: {"ok": true, "result": body} for 2xx,
// {"ok": false, "error": {...}} otherwise (the API's error, or one made of the status).
nlohmann::json socket_reply_for(int status, const std::string& body);

}  // namespace laas::api

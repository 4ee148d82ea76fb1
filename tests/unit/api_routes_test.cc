// laas-api's mapping (api/routes.h): HTTP request -> control-socket request, socket reply -> HTTP
// status and body; and the OpenAPI document (api/openapi.json) against the route table.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "api/events.h"
#include "api/routes.h"
#include "service/protocol.h"

namespace laas::api {
namespace {

using nlohmann::json;
using Query = std::multimap<std::string, std::string>;

Mapped map(const std::string& method, const std::string& path, const std::string& body = "",
           Role role = Role::kWriter, const Query& query = {}) {
  MapOptions o;
  o.wait_ms = 12000;
  return map_request(method, path, query, body, role, o);
}

int status_of(const Mapped& m) { return m.error ? m.error->status : 0; }

std::string code_of(const Mapped& m) {
  return m.error ? m.error->body["error"]["code"].get<std::string>() : "";
}

TEST(ApiRoles, WritersFirstThenReadersElseNone) {
  const std::vector<std::string> writers = {"ops", "both"}, readers = {"mon", "both"};
  EXPECT_EQ(role_for("ops", writers, readers), Role::kWriter);
  EXPECT_EQ(role_for("both", writers, readers), Role::kWriter);
  EXPECT_EQ(role_for("mon", writers, readers), Role::kReader);
  EXPECT_EQ(role_for("stranger", writers, readers), Role::kNone);
  EXPECT_EQ(role_for("", {""}, {""}), Role::kNone);
  EXPECT_EQ(role_for("OPS", writers, readers), Role::kNone);  // CNs compare exactly
}

TEST(ApiMap, TenantAddByCountWaitsForRouting) {
  const auto m = map("POST", "/v1/tenants", R"({"name":"bank","hosts":2})");
  ASSERT_FALSE(m.error);
  EXPECT_EQ(m.method, "tenant.add");
  EXPECT_EQ(m.params,
            json({{"name", "bank"}, {"hosts", 2}, {"wait", true}, {"timeout_ms", 12000}}));
}

TEST(ApiMap, TenantAddByHostListAndEveryLaasctlField) {
  const auto m = map("POST", "/v1/tenants",
                     R"({"name":"b","host_list":["h1","0x0002c90300000001"],"dry_run":true,
                        "wait":false,"slurm_accounts":["a"],"slurm_users":["u"],
                        "openstack_project":"p","servers":2})");
  ASSERT_FALSE(m.error) << m.error->body;
  EXPECT_EQ(m.params["host_list"], json({"h1", "0x0002c90300000001"}));
  EXPECT_EQ(m.params["wait"], false);  // the client's choice stands
  EXPECT_EQ(m.params["timeout_ms"], 12000);
  EXPECT_EQ(m.params["servers"], 2);
  EXPECT_EQ(m.params["openstack_project"], "p");
}

TEST(ApiMap, TenantReadAndRemoveTakeTheNameFromThePath) {
  auto m = map("GET", "/v1/tenants/bank", "", Role::kReader);
  ASSERT_FALSE(m.error);
  EXPECT_EQ(m.method, "tenant.get");
  EXPECT_EQ(m.params, json({{"name", "bank"}}));
  m = map("DELETE", "/v1/tenants/bank");
  ASSERT_FALSE(m.error);
  EXPECT_EQ(m.method, "tenant.remove");
  EXPECT_EQ(m.params, json({{"name", "bank"}, {"wait", true}, {"timeout_ms", 12000}}));
  m = map("DELETE", "/v1/tenants/bank", R"({"dry_run":true})");
  ASSERT_FALSE(m.error);
  EXPECT_EQ(m.params["dry_run"], true);
  EXPECT_EQ(map("GET", "/v1/tenants", "", Role::kReader).method, "tenant.list");
}

TEST(ApiMap, EveryReadRoute) {
  const std::vector<std::pair<std::string, std::string>> reads = {
      {"/v1/status", "status"},         {"/v1/metrics", "metrics"},
      {"/v1/tenants", "tenant.list"},   {"/v1/hosts", "host.list"},
      {"/v1/hosts/comp-1", "host.get"}, {"/v1/links", "link.list"},
      {"/v1/switches", "switch.list"},  {"/v1/sm", "sm.list"}};
  for (const auto& [path, method] : reads) {
    const auto m = map("GET", path, "", Role::kReader);
    ASSERT_FALSE(m.error) << path;
    EXPECT_EQ(m.method, method) << path;
  }
  const auto doc = map("GET", "/v1/openapi.json", "", Role::kReader);
  ASSERT_FALSE(doc.error);
  EXPECT_EQ(doc.method, "");  // served by laas-api itself
  EXPECT_EQ(map("GET", "/v1/hosts/comp-1", "", Role::kReader).params, json({{"name", "comp-1"}}));
}

TEST(ApiMap, ListFiltersComeFromTheQuery) {
  for (const char* path : {"/v1/hosts", "/v1/links", "/v1/switches"}) {
    const auto m = map("GET", path, "", Role::kReader, {{"state", "drained"}});
    ASSERT_FALSE(m.error) << path;
    EXPECT_EQ(m.params, json({{"state", "drained"}})) << path;
  }
  auto m = map("GET", "/v1/hosts", "", Role::kReader, {{"colour", "red"}});
  EXPECT_EQ(status_of(m), 400);
  EXPECT_NE(m.error->body["error"]["message"].get<std::string>().find("colour"), std::string::npos);
  EXPECT_EQ(status_of(map("GET", "/v1/hosts", "", Role::kReader, {{"state", "a"}, {"state", "b"}})),
            400);
  EXPECT_EQ(status_of(map("GET", "/v1/tenants", "", Role::kReader, {{"state", "free"}})), 400);
}

TEST(ApiMap, EveryChangeRoute) {
  struct Case {
    const char* path;
    const char* body;
    const char* method;
    bool waits;
  };
  const std::vector<Case> cases = {
      {"/v1/hosts/drain", R"({"hosts":["h1"],"reason":"fan"})", "host.drain", false},
      {"/v1/hosts/resume", R"({"hosts":["h1"]})", "host.resume", false},
      {"/v1/hosts/accept", R"({"hosts":["h1"],"dry_run":true})", "host.accept", true},
      {"/v1/links/drain", R"({"link":"sw:3","reason":"cable"})", "link.drain", true},
      {"/v1/links/resume", R"({"link":"sw:3"})", "link.resume", true},
      {"/v1/switches/drain", R"({"switch":"sw","reason":"psu"})", "switch.drain", true},
      {"/v1/switches/resume", R"({"switch":"sw"})", "switch.resume", true},
      {"/v1/sm/accept", R"({"guid":"0x1"})", "sm.accept", true},
      {"/v1/sm/forget", R"({"guid":"0x1"})", "sm.forget", true},
  };
  for (const auto& c : cases) {
    const auto m = map("POST", c.path, c.body);
    ASSERT_FALSE(m.error) << c.path << ": " << m.error->body;
    EXPECT_EQ(m.method, c.method);
    json want = json::parse(c.body);
    if (c.waits) {
      want["wait"] = true;
      want["timeout_ms"] = 12000;
    }
    EXPECT_EQ(m.params, want) << c.path;
    // A reader may not.
    const auto refused = map("POST", c.path, c.body, Role::kReader);
    EXPECT_EQ(status_of(refused), 403) << c.path;
    EXPECT_EQ(code_of(refused), "permission_denied");
  }
}

TEST(ApiMap, RolesAreCheckedBeforeTheBody) {
  EXPECT_EQ(status_of(map("POST", "/v1/tenants", R"({"name":"x","hosts":1})", Role::kReader)), 403);
  EXPECT_EQ(status_of(map("DELETE", "/v1/tenants/x", "", Role::kReader)), 403);
  EXPECT_EQ(status_of(map("POST", "/v1/tenants", "{cut", Role::kReader)), 403);
  // A CN in neither list reads nothing either.
  EXPECT_EQ(status_of(map("GET", "/v1/status", "", Role::kNone)), 403);
  EXPECT_EQ(status_of(map("GET", "/v1/openapi.json", "", Role::kNone)), 403);
  EXPECT_FALSE(map("GET", "/v1/status", "", Role::kReader).error);
}

TEST(ApiMap, BadPathsAre404AndWrongMethods405) {
  for (const char* path :
       {"", "v1/status", "/", "/v1", "/v1/", "/v1/nope", "/v1/tenants/", "/v1/tenants/a/b",
        "/v2/tenants", "/v1/status/", "//v1/status", "/v1/tenants//"}) {
    const auto m = map("GET", path, "", Role::kWriter);
    EXPECT_EQ(status_of(m), 404) << "'" << path << "'";
    EXPECT_EQ(code_of(m), "not_found");
  }
  auto m = map("PUT", "/v1/tenants");
  EXPECT_EQ(status_of(m), 405);
  EXPECT_EQ(m.error->allow, "GET, POST");
  m = map("POST", "/v1/tenants/bank");
  EXPECT_EQ(status_of(m), 405);
  EXPECT_EQ(m.error->allow, "GET, DELETE");
  // GET /v1/hosts/drain is the host named "drain"; only POST drains.
  EXPECT_EQ(map("GET", "/v1/hosts/drain", "", Role::kReader).method, "host.get");
  EXPECT_EQ(status_of(map("DELETE", "/v1/status")), 405);
}

TEST(ApiMap, BadBodiesAre400) {
  const std::vector<std::string> bad = {
      R"({"name":"bank","hosts":)",  // cut
      R"([{"name":"bank"}])",        // not an object
      R"("bank")",
      R"({"name":"bank","hosts":2,"colour":"red"})",  // unknown field
      R"({"name":"bank"} trailing)",
      "\xff\xfe",
      std::string(40, '[') + std::string(40, ']'),  // deeper than any route takes
  };
  for (const auto& body : bad) {
    const auto m = map("POST", "/v1/tenants", body);
    EXPECT_EQ(status_of(m), 400) << body;
    EXPECT_EQ(code_of(m), "bad_request") << body;
  }
  // A route without a body takes none; blank space is no body.
  EXPECT_EQ(status_of(map("GET", "/v1/status", "{}", Role::kReader)), 400);
  EXPECT_FALSE(map("GET", "/v1/status", " \r\n", Role::kReader).error);
  // An empty body is left to the service, which names the missing field.
  const auto empty = map("POST", "/v1/tenants", "");
  ASSERT_FALSE(empty.error);
  EXPECT_FALSE(empty.params.contains("name"));
}

// A path or query is percent-decoded bytes: what is not UTF-8 cannot go into a JSON request.
TEST(ApiMap, BytesThatAreNotUtf8Are400) {
  auto m = map("GET", "/v1/tenants/\xff\xfe", "", Role::kReader);
  EXPECT_EQ(status_of(m), 400);
  (void)m.error->body.dump();  // the answer itself is JSON (throws if it carried the bytes)
  m = map("GET", "/v1/hosts", "", Role::kReader, {{"state", "\xc3"}});
  EXPECT_EQ(status_of(m), 400);
  m = map("GET", "/v1/hosts", "", Role::kReader, {{"\xc3", "free"}});
  EXPECT_EQ(status_of(m), 400);
  EXPECT_FALSE(map("GET", "/v1/tenants/caf\xc3\xa9", "", Role::kReader).error);
}

TEST(ApiMap, BodiesOverOneMebibyteAre413) {
  const std::string big = R"({"name":")" + std::string(kMaxBodyBytes, 'a') + R"("})";
  const auto m = map("POST", "/v1/tenants", big);
  EXPECT_EQ(status_of(m), 413);
  EXPECT_EQ(code_of(m), "too_large");
  // The limit is on the body, before anything else: a reader's too.
  EXPECT_EQ(status_of(map("POST", "/v1/tenants", big, Role::kReader)), 413);
  const std::string at_limit = std::string(kMaxBodyBytes, ' ');
  EXPECT_NE(status_of(map("POST", "/v1/tenants", at_limit)), 413);
}

json ok_reply(const json& result) {
  return {{"v", 1}, {"id", 1}, {"ok", true}, {"result", result}};
}

json error_reply_json(const std::string& code, const std::string& message) {
  return {{"v", 1}, {"id", 1}, {"ok", false}, {"error", {{"code", code}, {"message", message}}}};
}

TEST(ApiReply, ResultIsTheBodyWithTheRoutesStatus) {
  const json tenant = {{"name", "bank"}, {"hosts", json::array()}};
  auto r = map_reply(map("POST", "/v1/tenants", R"({"name":"bank","hosts":2})"), ok_reply(tenant));
  EXPECT_EQ(r.status, 201);
  EXPECT_EQ(r.body, tenant);
  EXPECT_EQ(r.location, "/v1/tenants/bank");
  r = map_reply(map("POST", "/v1/tenants", R"({"name":"bank","hosts":2,"dry_run":true})"),
                ok_reply(tenant));
  EXPECT_EQ(r.status, 200);  // nothing created
  EXPECT_EQ(r.location, "");
  r = map_reply(map("GET", "/v1/tenants", "", Role::kReader), ok_reply(json::array()));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, json::array());
  r = map_reply(map("DELETE", "/v1/tenants/bank"), ok_reply({{"removed", "bank"}}));
  EXPECT_EQ(r.status, 200);
}

TEST(ApiReply, EverySocketErrorCodeHasItsStatus) {
  const std::map<std::string, int> want = {
      {"bad_request", 400}, {"refused", 409},           {"not_found", 404},
      {"duplicate", 409},   {"unavailable", 503},       {"busy", 503},
      {"not_master", 503},  {"permission_denied", 403}, {"internal", 500}};
  for (const auto& e : service::kErrorExits) {
    ASSERT_TRUE(want.count(e.code)) << "no status decided for the socket's code " << e.code;
    const auto m = map("POST", "/v1/tenants", R"({"name":"bank","hosts":2})");
    const auto r = map_reply(m, error_reply_json(e.code, std::string("because ") + e.code));
    EXPECT_EQ(r.status, want.at(e.code)) << e.code;
    EXPECT_EQ(r.body,
              json({{"error", {{"code", e.code}, {"message", std::string("because ") + e.code}}}}));
  }
  EXPECT_EQ(status_for_error("something_new"), 500);
}

TEST(ApiReply, AStandbysRefusalIs503NamingTheMaster) {
  const std::string says =
      "this SM (0x0002c903000000aa 'sm2') is standby, not the master: tenant changes are made at "
      "the master SM 0x0002c903000000bb 'sm1' LID 1";
  const auto r = map_reply(map("DELETE", "/v1/tenants/bank"), error_reply_json("not_master", says));
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body["error"]["code"], "not_master");
  EXPECT_EQ(r.body["error"]["message"], says);
}

TEST(ApiReply, UnreadableRepliesAre502) {
  const auto m = map("GET", "/v1/status", "", Role::kReader);
  for (const json& reply :
       {json(nullptr), json::array(), json({{"result", 1}}), json({{"ok", "yes"}})})
    EXPECT_EQ(map_reply(m, reply).status, 502) << reply;
  // An error without its fields is still an error.
  const auto r = map_reply(m, json({{"ok", false}, {"error", 3}}));
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body["error"]["code"], "internal");
}

TEST(ApiReply, SocketFailures) {
  EXPECT_EQ(socket_failure(service::kExitTimeout, "late").status, 504);
  EXPECT_EQ(socket_failure(service::kExitBusy, "busy").status, 503);
  EXPECT_EQ(socket_failure(service::kExitBusy, "busy").body["error"]["code"], "busy");
  const auto r = socket_failure(service::kExitUnreachable, "no socket");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body, json({{"error", {{"code", "unavailable"}, {"message", "no socket"}}}}));
}

// laasctl --server: a socket request back to the HTTP request laas-api maps to it.
TEST(ApiClient, SocketRequestsBecomeTheirHttpRequests) {
  auto r = http_request_for(
      "tenant.add",
      {{"name", "bank"}, {"hosts", 4}, {"dry_run", false}, {"wait", true}, {"timeout_ms", 59000}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->method, "POST");
  EXPECT_EQ(r->target, "/v1/tenants");
  // timeout_ms is the API's to decide.
  EXPECT_EQ(json::parse(r->body),
            json({{"name", "bank"}, {"hosts", 4}, {"dry_run", false}, {"wait", true}}));
  r = http_request_for("tenant.get", {{"name", "a b/c"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->method, "GET");
  EXPECT_EQ(r->target, "/v1/tenants/a%20b%2Fc");
  EXPECT_EQ(r->body, "");
  r = http_request_for("host.list", {{"state", "free"}});
  EXPECT_EQ(r->target, "/v1/hosts?state=free");
  r = http_request_for("tenant.remove", {{"name", "bank"}, {"wait", true}, {"timeout_ms", 1}});
  EXPECT_EQ(r->method, "DELETE");
  EXPECT_EQ(r->target, "/v1/tenants/bank");
  EXPECT_EQ(json::parse(r->body), json({{"wait", true}}));
  for (const char* local : {"topology", "audit", "export", "tenant.plan", "", "nonsense"})
    EXPECT_FALSE(http_request_for(local, json::object())) << local;
}

// Every route both ways: the HTTP request made for a socket request maps back to it.
TEST(ApiClient, EveryRouteRoundTrips) {
  for (const auto& route : routes()) {
    if (!*route.socket_method) continue;
    json params = json::object();
    if (*route.path_param) params[route.path_param] = "x1";
    for (const char* f : route.body_fields)
      params[f] = std::string(f) == "wait" ? json(true) : json("v");
    for (const char* q : route.query_fields)
      params[q] = std::string(q) == "since" ? json(7) : json("free");
    const auto r = http_request_for(route.socket_method, params);
    ASSERT_TRUE(r) << route.socket_method;
    const size_t question = r->target.find('?');
    Query query;
    if (question != std::string::npos) {
      const std::string q = r->target.substr(question + 1);
      query.emplace(q.substr(0, q.find('=')), q.substr(q.find('=') + 1));
    }
    const auto m = map(r->method, r->target.substr(0, question), r->body, Role::kWriter, query);
    ASSERT_FALSE(m.error) << route.pattern << ": " << m.error->body;
    EXPECT_EQ(m.method, route.socket_method);
    json want = params;
    if (route.waits) {
      want["wait"] = true;
      want["timeout_ms"] = 12000;
    }
    EXPECT_EQ(m.params, want) << route.pattern;
  }
}

TEST(ApiClient, HttpAnswersBecomeSocketReplies) {
  EXPECT_EQ(socket_reply_for(201, R"({"name":"bank"})"),
            json({{"v", 1}, {"ok", true}, {"result", {{"name", "bank"}}}}));
  EXPECT_EQ(socket_reply_for(409, R"({"error":{"code":"duplicate","message":"exists"}})")["error"],
            json({{"code", "duplicate"}, {"message", "exists"}}));
  const json proxy = socket_reply_for(502, "<html>bad gateway</html>");
  EXPECT_EQ(proxy["ok"], false);
  EXPECT_EQ(proxy["error"]["code"], "internal");
  EXPECT_EQ(socket_reply_for(503, "")["error"]["code"], "busy");  // try again
  EXPECT_EQ(socket_reply_for(403, "")["error"]["code"], "permission_denied");
}

// GET /v1/events: a position from the query (or Last-Event-ID, which laas-api passes as since)
// goes to the socket as a number; anything else is a 400.
TEST(ApiEvents, SinceIsAPosition) {
  auto m = map("GET", "/v1/events", "", Role::kReader);
  ASSERT_FALSE(m.error);
  EXPECT_EQ(m.method, "events");
  EXPECT_EQ(m.params, json::object());  // from now on
  m = map("GET", "/v1/events", "", Role::kReader, {{"since", "12000"}});
  ASSERT_FALSE(m.error);
  EXPECT_EQ(m.params, json({{"since", 12000}}));
  for (const char* bad : {"", "x", "-1", "1e3", "12 ", "99999999999999999999"})
    EXPECT_EQ(status_of(map("GET", "/v1/events", "", Role::kReader, {{"since", bad}})), 400) << bad;
  EXPECT_EQ(status_of(map("GET", "/v1/events", "", Role::kNone)), 403);
}

TEST(ApiEvents, FramesAreOneEventEachWithItsSeqAsId) {
  const json result = {{"events",
                        {{{"seq", 5000}, {"type", "tenant.added"}, {"tenant", "bank"}},
                         {{"seq", 5001}, {"type", "tenant.removed"}, {"tenant", "multi\nline"}}}},
                       {"next", 5001},
                       {"lost", false}};
  EXPECT_EQ(sse_frames(result),
            "id: 5000\nevent: tenant.added\ndata: "
            "{\"seq\":5000,\"tenant\":\"bank\",\"type\":\"tenant.added\"}\n\n"
            "id: 5001\nevent: tenant.removed\ndata: "
            "{\"seq\":5001,\"tenant\":\"multi\\nline\",\"type\":\"tenant.removed\"}\n\n");
  EXPECT_EQ(next_position(result), 5001u);
  // Nothing new: a comment, which is also how a gone client is noticed.
  EXPECT_EQ(sse_frames({{"events", json::array()}, {"next", 7}, {"lost", false}}), ": waiting\n\n");
  // Lost: said first, with where to go on from.
  EXPECT_EQ(sse_frames({{"events", json::array()}, {"next", 9}, {"lost", true}}),
            "event: lost\ndata: {\"next\":9}\n\n");
  // A type that would break the frame is not written as the event name.
  EXPECT_NE(sse_frames({{"events", {{{"seq", 1}, {"type", "a\nevent: forged"}}}}})
                .find("event: change\n"),
            std::string::npos);
  EXPECT_FALSE(next_position(json::array()));
}

json openapi() {
  std::ifstream in(LAAS_API_DIR "/openapi.json");
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The document's operations and the route table are the same set, both ways.
TEST(ApiOpenApi, EveryRouteIsDocumentedAndNothingElse) {
  const json doc = openapi();
  std::set<std::string> documented, implemented;
  for (const auto& [path, item] : doc["paths"].items())
    for (const auto& [verb, op] : item.items())
      if (verb != "parameters") documented.insert(verb + " " + path);
  for (const auto& r : routes()) implemented.insert(lower(r.http_method) + " " + r.pattern);
  EXPECT_EQ(documented, implemented);
}

// Each operation documents its success status, its body's fields and its query parameters as
// the route takes them.
TEST(ApiOpenApi, StatusesBodiesAndParametersMatchTheRoutes) {
  const json doc = openapi();
  for (const auto& r : routes()) {
    const std::string where = std::string(r.http_method) + " " + r.pattern;
    const json& op = doc["paths"][r.pattern][lower(r.http_method)];
    EXPECT_TRUE(op["responses"].contains(std::to_string(r.ok_status))) << where;
    std::set<std::string> fields, want_fields;
    for (const char* f : r.body_fields) want_fields.insert(f);
    if (op.contains("requestBody")) {
      const std::string ref = op["requestBody"]["content"]["application/json"]["schema"]["$ref"];
      const json& schema = doc["components"]["schemas"][ref.substr(ref.rfind('/') + 1)];
      for (const auto& [name, _] : schema["properties"].items()) fields.insert(name);
      EXPECT_EQ(schema["additionalProperties"], false) << where;
    }
    EXPECT_EQ(fields, want_fields) << where;
    std::set<std::string> query, want_query;
    for (const char* q : r.query_fields) want_query.insert(q);
    for (const auto& p : op.value("parameters", json::array()))
      if (p["in"] == "query") query.insert(p["name"].get<std::string>());
    EXPECT_EQ(query, want_query) << where;
    if (r.writes) {
      EXPECT_TRUE(op["responses"].contains("403")) << where;
    }
  }
}

}  // namespace
}  // namespace laas::api

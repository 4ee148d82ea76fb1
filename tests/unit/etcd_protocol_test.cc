// etcd's JSON gateway requests and replies (service/etcd_protocol.h), without an etcd: the
// replies are the ones etcd 3.4 gives (taken from a live member), then broken.
#include "service/etcd_protocol.h"

#include <gtest/gtest.h>

#include "service/etcd_client.h"

namespace laas::service::etcd {
namespace {

using nlohmann::json;

TEST(EtcdProtocol, Base64RoundTripsEveryLengthAndByte) {
  EXPECT_EQ(base64_encode("/laas/state"), "L2xhYXMvc3RhdGU=");
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("ab"), "YWI=");
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  for (std::size_t n = 0; n < all.size(); n += 37)
    EXPECT_EQ(base64_decode(base64_encode(all.substr(0, n))), all.substr(0, n));
}

TEST(EtcdProtocol, Base64RefusesWhatIsNotBase64) {
  EXPECT_THROW(base64_decode("abc"), ReplyError);       // length
  EXPECT_THROW(base64_decode("ab$d"), ReplyError);      // alphabet
  EXPECT_THROW(base64_decode("a=cd"), ReplyError);      // padding inside
  EXPECT_THROW(base64_decode("ab==abcd"), ReplyError);  // padding before the end
}

TEST(EtcdProtocol, PrefixEndIsTheNextKey) {
  EXPECT_EQ(prefix_end("/laas/"), "/laas0");
  EXPECT_EQ(prefix_end(std::string("a\xff", 2)), "b");
}

TEST(EtcdProtocol, TxnRequestComparesAndPutsAsTheGatewayNamesThem) {
  const json body = txn_request({{"/l/leader", Compare::Target::kModRevision, 42, ""},
                                 {"/l/leader", Compare::Target::kValue, 0, "sm-a"},
                                 {"/l/state", Compare::Target::kCreateRevision, 0, ""}},
                                {{Op::Kind::kPut, "/l/state", "{}", 7, false}},
                                {{Op::Kind::kRange, "/l/", "", 0, true}});
  EXPECT_EQ(body["compare"][0], json({{"key", base64_encode("/l/leader")},
                                      {"result", "EQUAL"},
                                      {"target", "MOD"},
                                      {"mod_revision", "42"}}));
  EXPECT_EQ(body["compare"][1]["value"], base64_encode("sm-a"));
  EXPECT_EQ(body["compare"][2]["target"], "CREATE");
  EXPECT_EQ(body["success"][0]["request_put"]["lease"], "7");
  EXPECT_EQ(body["failure"][0]["request_range"]["range_end"], base64_encode("/l0"));
}

TEST(EtcdProtocol, ParsesRangeTxnLeaseAndWatchReplies) {
  const RangeReply r = parse_range(json::parse(
      R"({"header":{"revision":"2"},"kvs":[{"key":"L2xhYXMvc3RhdGU=","create_revision":"2",)"
      R"("mod_revision":"2","version":"1","value":"aGVsbG8="}],"count":"1"})"));
  EXPECT_EQ(r.revision, 2);
  ASSERT_EQ(r.kvs.size(), 1u);
  EXPECT_EQ(r.kvs[0].key, "/laas/state");
  EXPECT_EQ(r.kvs[0].value, "hello");
  EXPECT_TRUE(parse_range(json::parse(R"({"header":{"revision":"1"}})")).kvs.empty());

  // A failed transaction leaves "succeeded" out (proto3's default) and gives its ranges.
  const TxnReply failed = parse_txn(json::parse(
      R"({"header":{"revision":"2"},"responses":[{"response_range":{"header":{"revision":"2"},)"
      R"("kvs":[{"key":"eA==","mod_revision":"2","value":"eQ=="}],"count":"1"}}]})"));
  EXPECT_FALSE(failed.succeeded);
  ASSERT_EQ(failed.ranges.size(), 1u);
  EXPECT_EQ(failed.ranges[0].kvs[0].value, "y");
  const TxnReply ok = parse_txn(json::parse(
      R"({"header":{"revision":"3"},"succeeded":true,"responses":[{"response_put":{}}]})"));
  EXPECT_TRUE(ok.succeeded);
  EXPECT_EQ(ok.revision, 3);

  EXPECT_EQ(parse_lease_grant(json::parse(R"({"header":{},"ID":"4111","TTL":"10"})")),
            std::make_pair(std::int64_t{4111}, std::int64_t{10}));
  EXPECT_EQ(parse_keepalive(json::parse(R"({"result":{"header":{},"ID":"5","TTL":"9"}})")), 9);
  EXPECT_EQ(parse_keepalive(json::parse(R"({"result":{"header":{},"ID":"5"}})")), 0);  // gone

  const WatchMessage w = parse_watch(json::parse(
      R"({"result":{"header":{"revision":"4"},"events":[{"kv":{"key":"eA==","mod_revision":"3",)"
      R"("value":"eQ=="}},{"type":"DELETE","kv":{"key":"eA==","mod_revision":"4"}}]}})"));
  EXPECT_EQ(w.revision, 4);
  ASSERT_EQ(w.events.size(), 2u);
  EXPECT_FALSE(w.events[0].deleted);
  EXPECT_TRUE(w.events[1].deleted);
  EXPECT_TRUE(
      parse_watch(json::parse(R"({"result":{"header":{"revision":"3"},"created":true}})")).created);
}

TEST(EtcdProtocol, BadRepliesAreErrorsNamingWhatIsWrong) {
  const auto message = [](const std::string& text, auto parse) {
    try {
      parse(json::parse(text));
    } catch (const ReplyError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  const auto range = [](const json& j) { parse_range(j); };
  const auto txn = [](const json& j) { parse_txn(j); };
  const auto watch = [](const json& j) { parse_watch(j); };
  const auto grant = [](const json& j) { parse_lease_grant(j); };
  EXPECT_EQ(message(R"({"error":"etcdserver: request timed out","code":14})", range),
            "etcd: etcdserver: request timed out (code 14)");
  EXPECT_EQ(message(R"({"error":{"grpc_code":1,"message":"context canceled"}})", watch),
            "etcd: context canceled (code 1)");
  EXPECT_NE(message(R"({"kvs":[]})", range).find("no object 'header'"), std::string::npos);
  EXPECT_NE(message(R"({"header":{"revision":"x2"}})", range).find("'revision' is not an integer"),
            std::string::npos);
  EXPECT_NE(message(R"({"header":{"revision":"1"},"kvs":{}})", range).find("'kvs' is not a list"),
            std::string::npos);
  EXPECT_NE(
      message(R"({"header":{"revision":"1"},"kvs":[{"key":"%%%%"}]})", range).find("not base64"),
      std::string::npos);
  EXPECT_NE(message(R"({"header":{"revision":"1"},"succeeded":"yes"})", txn).find("not a boolean"),
            std::string::npos);
  EXPECT_NE(message(R"({"header":{"revision":"1"},"responses":[1]})", txn).find("not an object"),
            std::string::npos);
  EXPECT_NE(message(R"({"result":{"header":{"revision":"1"},"created":"yes"}})", watch)
                .find("wrong type"),
            std::string::npos);
  EXPECT_NE(
      message(R"({"result":{"header":{"revision":"1"},"events":[{"type":"MOVE","kv":{}}]}})", watch)
          .find("event type 'MOVE'"),
      std::string::npos);
  EXPECT_NE(message(R"({"header":{},"ID":"0"})", grant).find("without an ID"), std::string::npos);
  EXPECT_EQ(message("[1,2]", range), "the reply is not a JSON object");
}

TEST(EtcdProtocol, EndpointsAreHostPortOrHttpUrls) {
  EXPECT_EQ(endpoint_url("127.0.0.1:2379"), "http://127.0.0.1:2379");
  EXPECT_EQ(endpoint_url("https://sm-a:2379/"), "https://sm-a:2379");
  EXPECT_THROW(endpoint_url("unix:///run/etcd.sock"), std::invalid_argument);
  EXPECT_THROW(endpoint_url("http://sm-a:2379/v3"), std::invalid_argument);
  EXPECT_THROW(endpoint_url(""), std::invalid_argument);
}

TEST(EtcdProtocol, AClientWithoutAMemberThatAnswersIsUnavailableWithinItsDeadline) {
  // Nothing listens on port 1: every member refuses, quickly; the error names each.
  Client client({{"127.0.0.1:1", "127.0.0.1:1"}, "", "", "", 300});
  try {
    client.range("/laas/state");
    FAIL() << "answered";
  } catch (const UnavailableError& e) {
    EXPECT_NE(std::string(e.what()).find("http://127.0.0.1:1: "), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace laas::service::etcd

// One GUID grammar for every file and command (util/guid.h): each text means one port or none,
// wherever it is written.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "export/records.h"
#include "service/state_store.h"
#include "util/guid.h"

namespace {

struct GuidCase {
  const char* text;
  std::optional<std::uint64_t> guid;
};

const GuidCase kCases[] = {
    {"0x0002c903000a1b2c", 0x0002c903000a1b2cULL},
    {"0X0002C903000A1B2C", 0x0002c903000a1b2cULL},
    {"0002c903000a1b2c", 0x0002c903000a1b2cULL},
    {"1234", 0x1234},  // hex everywhere, never decimal 1234
    {"0777", 0x777},   // never octal
    {"0x1", 0x1},
    {"ffffffffffffffff", 0xffffffffffffffffULL},
    {"", std::nullopt},
    {"0x", std::nullopt},
    {"0x11111111111111111", std::nullopt},  // 17 digits
    {"-1", std::nullopt},
    {"+1", std::nullopt},
    {" 0x1", std::nullopt},
    {"0x1 ", std::nullopt},
    {"node000", std::nullopt},
    {"0xg", std::nullopt},
    {"0x0x1", std::nullopt},
};

TEST(GuidGrammar, EveryParserReadsTheSameTable) {
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.text);
    EXPECT_EQ(laas::util::parse_guid(c.text), c.guid);
    if (c.guid) {
      EXPECT_EQ(laas::service::parse_guid(c.text), *c.guid);
      EXPECT_EQ(laas::exports::parse_guid(c.text, "json", "test"), *c.guid);
    } else {
      EXPECT_ANY_THROW(laas::service::parse_guid(c.text));
      EXPECT_ANY_THROW(laas::exports::parse_guid(c.text, "json", "test"));
    }
  }
}

TEST(GuidGrammar, WrittenOneWay) {
  EXPECT_EQ(laas::util::guid_hex(0x1234), "0x0000000000001234");
  EXPECT_EQ(laas::util::parse_guid(laas::util::guid_hex(0xabcdefULL)), 0xabcdefULL);
}

}  // namespace

// The tables an SM last sent, as kept in the state directory: what is written reads back
// equal, and a cut, damaged or foreign file is refused whole (never half used).
#include "routing/saved_tables.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace laas::routing {
namespace {

struct Sent {
  std::vector<topology::Guid> guids{0x1000, 0, 0x2000};  // node 1 is a CA
  std::vector<std::vector<std::uint8_t>> tables{{0xFF, 1, 2, 3}, {}, {0xFF, 4, 0xFF, 5, 6}};
  Sl2VlTables sl2vl{3};
  Sent() {
    sl2vl.init_node(0, 3);
    sl2vl.set(0, 1, 2, kAllSls);
    sl2vl.set(0, 2, 1, 0x0003);
  }
};

TEST(SavedTables, ReadBackEqualBySwitchGuid) {
  Sent sent;
  const auto saved = decode_saved_tables(encode_saved_tables(sent.guids, sent.tables, sent.sl2vl));
  ASSERT_EQ(saved.switches.size(), 2u);  // the CA is left out
  const auto& first = saved.switches.at(0x1000);
  EXPECT_EQ(first.lft, sent.tables[0]);
  ASSERT_EQ(first.ports, 3);
  EXPECT_EQ(first.drops, sent.sl2vl.drops[0]);
  const auto& second = saved.switches.at(0x2000);
  EXPECT_EQ(second.lft, sent.tables[2]);
  EXPECT_EQ(second.ports, 0);  // no SL2VL plan (OpenSM without qos)
  EXPECT_TRUE(second.drops.empty());
}

TEST(SavedTables, ACutDamagedOrForeignFileIsRefused) {
  Sent sent;
  const std::string good = encode_saved_tables(sent.guids, sent.tables, sent.sl2vl);
  for (std::size_t n : {std::size_t{0}, std::size_t{7}, std::size_t{20}, good.size() - 1}) {
    EXPECT_THROW(decode_saved_tables(good.substr(0, n)), std::runtime_error) << "cut at " << n;
  }
  for (std::size_t at : {std::size_t{12}, std::size_t{30}, good.size() - 9}) {
    std::string damaged = good;
    damaged[at] ^= 0x40;
    try {
      decode_saved_tables(damaged);
      ADD_FAILURE() << "a byte changed at " << at << " was read";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("checksum"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(decode_saved_tables(std::string("{\"version\": 1}") + std::string(20, ' ')),
               std::runtime_error);
}

}  // namespace
}  // namespace laas::routing

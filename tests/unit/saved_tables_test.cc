// The tables an SM last sent, as kept in the state directory: what is written reads back
// equal; a cut, damaged, foreign or format-1 file is refused whole (never half used); a file
// from an older term is refused; and only the entries whose LID still belongs to the same port
// at the same place are given back.
#include "routing/saved_tables.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace laas::routing {
namespace {

// Two switches (0x1000 with a 3-port SL2VL plan, 0x2000 without), a CA between them, LIDs:
// 1 and 2 the switches, 3 host 0xA cabled to 0x2000 port 1, 4 host 0xB to 0x2000 port 3.
struct Sent {
  std::vector<topology::Guid> guids{0x1000, 0, 0x2000};  // node 1 is a CA
  std::vector<std::vector<std::uint8_t>> tables{{0xFF, 0, 2, 1, 1}, {}, {0xFF, 4, 0, 1, 3}};
  Sl2VlTables sl2vl{3};
  SavedStamp stamp{7, 1764000000};
  LidOwners lids{
      {1, {0x1001, 0, 0}}, {2, {0x2001, 0, 0}}, {3, {0xA, 0x2000, 1}}, {4, {0xB, 0x2000, 3}}};
  Sent() {
    sl2vl.init_node(0, 3);
    sl2vl.set(0, 1, 2, kAllSls);
    sl2vl.set(0, 2, 1, 0x0003);
  }
  std::string bytes() const { return encode_saved_tables(stamp, lids, guids, tables, sl2vl); }
};

TEST(SavedTables, ReadBackEqualBySwitchGuid) {
  Sent sent;
  const auto saved = decode_saved_tables(sent.bytes());
  EXPECT_EQ(saved.stamp.term, 7u);
  EXPECT_EQ(saved.stamp.written_at, 1764000000);
  EXPECT_EQ(saved.lids, sent.lids);
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
  const std::string good = sent.bytes();
  for (std::size_t n : {std::size_t{0}, std::size_t{7}, std::size_t{20}, std::size_t{40},
                        good.size() / 2, good.size() - 1}) {
    EXPECT_THROW(decode_saved_tables(good.substr(0, n)), std::runtime_error) << "cut at " << n;
  }
  // In the term, the LID records and the tables.
  for (std::size_t at : {std::size_t{9}, std::size_t{30}, std::size_t{60}, good.size() - 9}) {
    std::string damaged = good;
    damaged[at] ^= 0x40;
    try {
      decode_saved_tables(damaged);
      ADD_FAILURE() << "a byte changed at " << at << " was read";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("checksum"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(decode_saved_tables(std::string("{\"version\": 1}") + std::string(40, ' ')),
               std::runtime_error);
}

// The tables a start gave back are kept again from the record itself: the same bytes as the
// encoder of a routing run's output, whatever the map's order.
TEST(SavedTables, ARecordEncodesAsTheRunItCameFrom) {
  Sent sent;
  const std::string bytes = sent.bytes();
  EXPECT_EQ(encode_saved_tables(decode_saved_tables(bytes)), bytes);
  LidOwners now = sent.lids;
  now[3] = {0xB, 0x2000, 3};
  const auto back = restorable(decode_saved_tables(bytes), now, nullptr);
  EXPECT_EQ(back.lids, now);  // what the tables given back fit
  const auto again = decode_saved_tables(encode_saved_tables(back));
  EXPECT_EQ(again.switches.at(0x1000).lft, back.switches.at(0x1000).lft);
  EXPECT_EQ(again.switches.at(0x1000).drops, back.switches.at(0x1000).drops);
}

// A writer compares what it would write with what the file holds, the write time left out.
TEST(SavedTables, TheContentHashLeavesOutOnlyTheWriteTime) {
  Sent sent;
  const std::string first = sent.bytes();
  sent.stamp.written_at += 60;
  EXPECT_EQ(saved_tables_content_hash(first), saved_tables_content_hash(sent.bytes()));
  sent.stamp.term += 1;
  EXPECT_NE(saved_tables_content_hash(first), saved_tables_content_hash(sent.bytes()));
  sent.stamp.term -= 1;
  sent.lids[3].switch_port = 2;
  EXPECT_NE(saved_tables_content_hash(first), saved_tables_content_hash(sent.bytes()));
  sent.lids[3].switch_port = 1;
  sent.tables[0][1] = 7;
  EXPECT_NE(saved_tables_content_hash(first), saved_tables_content_hash(sent.bytes()));
}

// A file written before LID owners and terms were recorded cannot be checked: refused, and
// the reason says which format it is.
TEST(SavedTables, AFormatOneFileIsRefusedSayingWhy) {
  std::string v1("LAASTBL1", 8);
  v1 += std::string(4 + 8, '\0');
  try {
    decode_saved_tables(v1);
    FAIL() << "a format-1 file was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("format 1"), std::string::npos) << e.what();
  }
}

TEST(SavedTables, AFileFromAnOlderTermIsRefused) {
  SavedStamp stamp{7, 0};
  EXPECT_EQ(older_term_refusal(stamp, 7), "");  // the last master wrote it
  EXPECT_EQ(older_term_refusal(stamp, 6), "");  // newer than the state: the tables last sent
  EXPECT_EQ(older_term_refusal(stamp, 0), "");  // no term known: nothing to compare
  const std::string why = older_term_refusal(stamp, 8);
  EXPECT_NE(why.find("term 7"), std::string::npos) << why;
  EXPECT_NE(why.find("term 8"), std::string::npos) << why;
}

TEST(SavedTables, NothingMovedEverythingIsGivenBack) {
  Sent sent;
  const auto saved = decode_saved_tables(sent.bytes());
  RestoreReport report;
  const auto back = restorable(saved, sent.lids, &report);
  EXPECT_TRUE(report.moved.empty());
  EXPECT_EQ(report.entries_dropped, 0u);
  EXPECT_EQ(report.ports_cut, 0u);
  EXPECT_EQ(back.switches.at(0x1000).lft, sent.tables[0]);
  EXPECT_EQ(back.switches.at(0x1000).drops, sent.sl2vl.drops[0]);
  EXPECT_EQ(back.switches.at(0x2000).lft, sent.tables[2]);
}

// Hosts A and B swapped LIDs while the SM was down: every entry of both LIDs is unreachable on
// every switch (never the other host's route); the switches' own LIDs keep theirs.
TEST(SavedTables, ALidThatMovedIsDroppedEverywhere) {
  Sent sent;
  const auto saved = decode_saved_tables(sent.bytes());
  LidOwners now = sent.lids;
  now[3] = {0xB, 0x2000, 3};
  now[4] = {0xA, 0x2000, 1};
  RestoreReport report;
  const auto back = restorable(saved, now, &report);
  EXPECT_EQ(report.moved, (std::vector<topology::Lid>{3, 4}));
  EXPECT_EQ(report.entries_dropped, 4u);
  EXPECT_EQ(back.switches.at(0x1000).lft, (std::vector<std::uint8_t>{0xFF, 0, 2, 0xFF, 0xFF}));
  EXPECT_EQ(back.switches.at(0x2000).lft, (std::vector<std::uint8_t>{0xFF, 4, 0, 0xFF, 0xFF}));
  // A LID given to a port that had none, or a port gone: the same.
  now = sent.lids;
  now.erase(4);
  now[5] = {0xC, 0x2000, 2};
  restorable(saved, now, &report);
  EXPECT_EQ(report.moved, (std::vector<topology::Lid>{4, 5}));
}

// Host A kept its LID but was re-cabled into B's place (and B into A's): their LIDs lead to
// the old places, so they are dropped; and the switch ports where the host changed drop every
// SL both ways in the SL2VL plan, so A does not get B's first hop.
TEST(SavedTables, AHostCabledElsewhereLosesItsEntriesAndTheFirstHop) {
  Sent sent;
  sent.guids = {0x1000, 0, 0x2000};
  sent.lids[3] = {0xA, 0x1000, 1};
  sent.lids[4] = {0xB, 0x1000, 2};
  const auto saved = decode_saved_tables(sent.bytes());
  LidOwners now = sent.lids;
  now[3] = {0xA, 0x1000, 2};
  now[4] = {0xB, 0x1000, 1};
  RestoreReport report;
  const auto back = restorable(saved, now, &report);
  EXPECT_EQ(report.moved, (std::vector<topology::Lid>{3, 4}));
  EXPECT_EQ(report.ports_cut, 2u);
  const auto& t = back.switches.at(0x1000);
  for (int in = 0; in < 3; ++in)
    for (int out = 0; out < 3; ++out) {
      const bool cut = in == 1 || in == 2 || out == 1 || out == 2;
      EXPECT_EQ(t.drops[in * 3 + out], cut ? kAllSls : sent.sl2vl.drops[0][in * 3 + out])
          << in << " -> " << out;
    }
  EXPECT_EQ(back.switches.at(0x2000).ports, 0);  // no plan: nothing to cut
}

}  // namespace
}  // namespace laas::routing

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>

#include "export/partitions.h"

namespace laas::exports {
namespace {

TenantRecord tenant(const std::string& name, Guid first_guid, int hosts = 2) {
  TenantRecord t;
  t.name = name;
  for (int i = 0; i < hosts; ++i)
    t.hosts.push_back(
        records::host_endpoint(name + "-h" + std::to_string(i), first_guid + 2 * i, 0));
  return t;
}

std::string errors(const PartitionsCheck& c) { return c.report("p.conf"); }

// The man page's examples, but for those giving ALL or ALL_SWITCHES full membership (refused,
// see RefusesEveryPortAsAFullMember).
TEST(ExportPartitionsValidate, AcceptsTheManPageExamples) {
  const char* text = R"(# examples from man opensm
Default=0x7fff : ALL, SELF=full ;
Default=0x7fff : ALL, ALL_SWITCHES=limited, SELF=full ;
YetAnotherOne = 0x300 : SELF=full ;
YetAnotherOne = 0x300 : ALL=limited ;
ShareIO = 0x80 , defmember=full : 0x123451, 0x123452;
ShareIO = 0x80 : 0x123453, 0x123454, 0x123455=full;
ShareIO   =   0x80   :   0x123456,   0x123457,
  0x123458=full;
Default=0x7fff,ipoib:
       mgid=ff12:401b::0707,sl=1 # random IPv4 group
       mgid=ff12:601b::16    # MLDv2-capable routers
       mgid=ff12::1,sl=1,Q_Key=0xDEADBEEF,rate=3,mtu=2 # random group
       ALL=limited;
Empty=0x10 : ;
)";
  const auto c = validate_partitions(text);
  EXPECT_TRUE(c.ok()) << errors(c);
  ASSERT_EQ(c.partitions.size(), 9u);
  EXPECT_EQ(c.partitions[4].name, "ShareIO");
  EXPECT_EQ(c.partitions[4].pkey, 0x80);
  EXPECT_EQ(c.partitions[4].line, 6);
}

struct Broken {
  const char* text;
  int line;
  const char* needle;
};

TEST(ExportPartitionsValidate, ReportsTheLineOfEachError) {
  const Broken cases[] = {
      {"Default=0x7fff : ALL=limited ;\n\nT = 0x12 : 0x10001=full,\n  0xzz=full ;\n", 4, "0xzz"},
      {"Default=0x7fff : ALL=limited ;\nT = 0x12 : 0x10001=full\n", 2, "not terminated"},
      {"# c\nT = 0x12 , 0x10001=full ;\n", 2, "no ':'"},
      {"T = 0x0 : ALL ;\n", 1, "low 15 bits"},
      {"T = 0x8000 : ALL ;\n", 1, "low 15 bits"},
      {"T = banana : ALL ;\n", 1, "P_Key 'banana'"},
      {"T = 0x10 : all=full ;\n", 1, "neither a port GUID"},
      {"T = 0x10 : 0x1,,0x2 ;\n", 1, "empty member"},
      {"T = 0x10 :\n ALL,\n\n mgid=fe80::1 ;\n", 4, "not a multicast GID"},
      {"T = 0x10, defmember=most : ALL ;\n", 1, "defmember"},
      {"T = 0x10, ipoib, rate=fast : ALL ;\n", 1, "rate"},
      {"T = 0x10 : 0x0 ;\n", 1, "GUID 0"},
      {"T = 0x10 : ALL ;\nU = 0x11 : \x01 ALL ;\n", 2, "control character"},
      // OpenSM reads line by line: a definition wrapped before its ':' is "no partition
      // definition found".
      {"A=0x7fff : ALL ;\nT = 0x12, ipoib,\n  indx0 : SELF=full ;\n", 2, "wrapped before its ':'"},
      {"T = 0x12\n: SELF=full ;\n", 1, "wrapped before its ':'"},
      // The man page's "ShareIO = 0x80 : defmember=limited : ..." is refused by OpenSM 3.3.23:
      // one ':' per statement, and a flag is no port.
      {"S = 0x80 : defmember=limited : 0x123456 ;\n", 1, "':' inside the member list"},
      {"S = 0x80 :\n defmember=limited,\n 0x123456 ;\n", 2, "partition flag, not a member"},
  };
  for (const auto& b : cases) {
    const auto c = validate_partitions(b.text);
    ASSERT_FALSE(c.ok()) << b.text;
    const auto report = errors(c);
    EXPECT_NE(report.find("p.conf:" + std::to_string(b.line) + ": error: "), std::string::npos)
        << "expected an error on line " << b.line << " for:\n"
        << b.text << "got:\n"
        << report;
    EXPECT_NE(report.find(b.needle), std::string::npos) << report;
  }
}

TEST(ExportPartitionsValidate, WarnsAboutWhatOpenSmSilentlyReinterprets) {
  const auto c = validate_partitions(
      "NewPartition , ipoib : 0x123456=full, 0x3456789034=limi, 0x2134af2306 ;\n"
      "A=0x20 : ALL ;\nB=0x20 : SELF ;\nC=0x21, mystery : ALL, ;\n");
  EXPECT_TRUE(c.ok()) << errors(c);
  const auto r = errors(c);
  EXPECT_NE(r.find("p.conf:1: warning: membership 'limi'"), std::string::npos) << r;
  EXPECT_NE(r.find("p.conf:3: warning: P_Key 0x0020 is also used by partition 'A'"),
            std::string::npos)
      << r;
  EXPECT_NE(r.find("p.conf:4: warning: unrecognized partition flag 'mystery'"), std::string::npos)
      << r;
  EXPECT_NE(r.find("p.conf:4: warning: ',' before ';'"), std::string::npos) << r;
  EXPECT_FALSE(c.partitions[0].pkey.has_value());
}

TEST(ExportPartitionsValidate, WarnsThatMgidSwallowsTheRestOfItsLine) {
  const auto c = validate_partitions(
      "Default=0x7fff, ipoib :\n"
      "  mgid=ff12:401b::0707, sl=1, 0x123456=full,\n"
      "  ALL=limited ;\n");
  EXPECT_TRUE(c.ok()) << errors(c);
  const auto r = errors(c);
  EXPECT_NE(r.find("p.conf:2: warning: '0x123456=full' follows an mgid= on the same line"),
            std::string::npos)
      << r;
  EXPECT_EQ(r.find("'sl=1'"), std::string::npos) << r;  // a group flag: meant for the mgid
  EXPECT_EQ(r.find("p.conf:3"), std::string::npos) << r;
}

// ALL, ALL_CAS or ALL_SWITCHES as full members make every tenant host a full member (tenants
// reach each other) or open the switches' management ports to every member: refused with the
// line, the member and the partition, read the way OpenSM reads them.
TEST(ExportPartitionsValidate, RefusesEveryPortAsAFullMember) {
  const Broken cases[] = {
      {"# site\n\nDefault=0x7fff : ALL=full ;\n", 3,
       "ALL=full makes every port a full member of partition Default (0x7fff): tenants could "
       "reach each other; use ALL=limited or list the full members"},
      {"Default=0x7fff :\n  SELF=full,\n  ALL_CAS=full ;\n", 3,
       "ALL_CAS=full makes every port of a host a full member of partition Default (0x7fff)"},
      {"Default=0x7fff : ALL_CAS=limited,\n ALL_SWITCHES=full, SELF=full ;\n", 2,
       "ALL_SWITCHES=full makes every switch's management port a full member of partition "
       "Default (0x7fff): every member, whatever its tenant, could reach"},
      {"Shared=0x10 : ALL=both ;\n", 1,
       "ALL=both makes every port a full member of partition "
       "Shared (0x0010)"},
      // OpenSM takes any prefix of "full" as full, the empty one included.
      {"S=0x10 : ALL=f ;\n", 1, "ALL=f makes every port"},
      {"S=0x10 : ALL= ;\n", 1, "ALL= makes every port"},
      // No membership given: the statement's defmember, which OpenSM also reads by prefix.
      {"Default=0x7fff, ipoib, defmember=full : ALL, SELF ;\n", 1,
       "ALL (defmember=full) makes every port"},
      {"Default=0x7fff, def=fu :\n ALL_CAS ;\n", 2, "ALL_CAS (defmember=full)"},
      {"Auto : ALL_SWITCHES=full ;\n", 1,
       "ALL_SWITCHES=full makes every switch's management port a full member of partition Auto "
       "(P_Key chosen by OpenSM)"},
  };
  for (const auto& b : cases) {
    const auto c = validate_partitions(b.text);
    ASSERT_FALSE(c.ok()) << b.text;
    const auto report = errors(c);
    EXPECT_NE(report.find("p.conf:" + std::to_string(b.line) + ": error: " + b.needle),
              std::string::npos)
        << "expected on line " << b.line << ": " << b.needle << "\nfor:\n"
        << b.text << "got:\n"
        << report;
  }
  // Limited members, full members by GUID (and SELF), and a defmember=full statement of GUIDs
  // are what partitions are for.
  for (const char* fine : {
           "Default=0x7fff : ALL=limited, SELF=full ;\n",
           "Default=0x7fff : ALL_CAS=limited, ALL_SWITCHES=limited, SELF=full, "
           "0x0002c90300001234=full ;\n",
           "Default=0x7fff : ALL, ALL_CAS=l, ALL_SWITCHES=limi ;\n",
           "ShareIO=0x80, defmember=full : 0x123451, 0x123452=both ;\n",
           "T=0x20, defmember=full : SELF ;\nU=0x21 : ALL ;\n",  // defmember is per statement
           "T=0x20, ALL=full : SELF ;\n",  // a flag OpenSM ignores, not a member
       }) {
    const auto c = validate_partitions(fine);
    EXPECT_TRUE(c.ok()) << fine << errors(c);
  }
}

TEST(ExportPartitionsValidate, DigitNameIsTheKeyAndLongLinesAreRefused) {
  const auto c = validate_partitions("0x20 : ALL ;\n");
  ASSERT_TRUE(c.ok()) << errors(c);
  EXPECT_EQ(c.partitions[0].pkey, 0x20);
  EXPECT_FALSE(validate_partitions("12abc : ALL ;\n").ok());
  std::string long_line = "L=0x21 : ";
  for (int i = 0; i < 300; ++i) long_line += "0x0002c90300001234=full, ";
  long_line += "SELF ;\n";
  const auto l = validate_partitions(long_line);
  EXPECT_FALSE(l.ok());
  EXPECT_NE(errors(l).find("OpenSM reads 4094 at a time"), std::string::npos) << errors(l);
}

TEST(ExportPartitionsPkeys, HashIsStableAndInRange) {
  EXPECT_EQ(pkey_hash("4"), 0x6698);
  EXPECT_EQ(pkey_hash("1"), 0x7751);
  for (const char* n : {"", "a", "bank", "x-very-long-tenant-name-0123456789"}) {
    EXPECT_GE(pkey_hash(n), 0x0001);
    EXPECT_LE(pkey_hash(n), 0x7ffe);
  }
}

TEST(ExportPartitionsPkeys, CollisionsProbeUpwardsInInputOrder) {
  const auto h = pkey_hash("bank");
  // Reserved by the base file: the first tenant probes past it.
  auto keys = assign_pkeys({tenant("bank", 0x10)}, {h});
  EXPECT_EQ(keys[0], h == 0x7ffe ? 1 : h + 1);
  // Same name hash twice is impossible, but an explicit P_Key can take another's hash value:
  // explicit keys win, derived ones move on.
  TenantRecord fixed = tenant("fixed", 0x100);
  fixed.pkey = h;
  keys = assign_pkeys({tenant("bank", 0x10), fixed}, {});
  EXPECT_EQ(keys[1], h);
  EXPECT_EQ(keys[0], h == 0x7ffe ? 1 : h + 1);
  // 0x7ffe wraps to 0x0001 past 0x7fff.
  std::set<std::uint16_t> reserved;
  for (int k = h; k <= 0x7ffe; ++k) reserved.insert(static_cast<std::uint16_t>(k));
  keys = assign_pkeys({tenant("bank", 0x10)}, reserved);
  EXPECT_EQ(keys[0], 1);
}

TEST(ExportPartitionsPkeys, RejectsBadExplicitKeys) {
  TenantRecord a = tenant("a", 0x10), b = tenant("b", 0x20);
  a.pkey = 0x7fff;
  EXPECT_THROW(assign_pkeys({a}, {}), ExportError);
  a.pkey = 0x30;
  b.pkey = 0x30;
  try {
    assign_pkeys({a, b}, {});
    FAIL() << "duplicate explicit P_Key accepted";
  } catch (const ExportError& e) {
    EXPECT_NE(std::string(e.what()).find("tenant 'b'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("tenant 'a'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(assign_pkeys({a}, {0x30}), ExportError);
}

TEST(ExportPartitionsGenerate, RefusesBadInput) {
  auto expect_error = [](const std::vector<TenantRecord>& t, const PartitionOptions& o,
                         const std::string& needle) {
    try {
      generate_partitions(t, o);
      ADD_FAILURE() << "accepted; wanted an error with " << needle;
    } catch (const ExportError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error({tenant("bad name", 0x10)}, {}, "tenant 'bad name'");
  expect_error({tenant("quo\"te", 0x10)}, {}, "'\"'");
  expect_error({tenant("tab\there", 0x10)}, {}, "control character 0x09");
  expect_error({tenant(std::string(27, 'x'), 0x10)}, {}, "at most 26");
  expect_error({tenant("-x", 0x10)}, {}, "starts with '-'");
  expect_error({tenant("a", 0x10), tenant("b", 0x10)}, {}, "also in tenant 'a'");
  expect_error({tenant("a", 0x10), tenant("a", 0x20)}, {}, "listed twice");
  PartitionOptions o;
  o.management = {{"ALL", Membership::kFull}};
  expect_error({tenant("a", 0x10)}, o, "every host");
  o.management = {{"0xnope", Membership::kFull}};
  expect_error({tenant("a", 0x10)}, o, "management port '0xnope'");
  o.management = {{"ALL_SWITCHES", Membership::kFull}};
  expect_error({tenant("a", 0x10)}, o, "every switch's management port");
  o = {};
  o.base_name = "/etc/opensm/partitions.conf";
  o.base_text = "Default=0x7fff : ALL=limited ;\nBroken=0x10 : 0x1=full\n";
  expect_error({tenant("a", 0x10)}, o, "/etc/opensm/partitions.conf:2");
  o.base_text = std::string("Default=0x7fff : ALL=limited ;\n") + kBeginMarker + "\n";
  expect_error({tenant("a", 0x10)}, o, "without an END marker");
}

// A base (partitions_base, or the managed file's own part) that makes everyone a full member is
// refused with the file and line -- the line of the file, even after a generated block.
TEST(ExportPartitionsGenerate, RefusesABaseThatMakesEveryoneAFullMember) {
  PartitionOptions o;
  o.base_name = "/etc/opensm/partitions.base";
  o.base_text = "# site\n\nDefault=0x7fff : ALL=full ;\n";
  const char* message =
      "partitions.conf: /etc/opensm/partitions.base:3: ALL=full makes every port a full member "
      "of partition Default (0x7fff): tenants could reach each other; use ALL=limited or list "
      "the full members";
  try {
    generate_partitions({tenant("a", 0x10)}, o);
    ADD_FAILURE() << "accepted";
  } catch (const ExportError& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
  EXPECT_THROW(base_reserved_pkeys(*o.base_text, o.base_name), ExportError);
  // The managed file as its own base: what LaaS generated is dropped, the administrator's line
  // after it keeps its number.
  o.base_name = "/etc/opensm/partitions.conf";
  const std::string managed = generate_partitions({tenant("a", 0x10)}, {});
  const int lines = static_cast<int>(std::count(managed.begin(), managed.end(), '\n'));
  o.base_text = managed + "Mine=0x20 : ALL_CAS=full ;\n";
  try {
    generate_partitions({tenant("a", 0x10)}, o);
    ADD_FAILURE() << "accepted";
  } catch (const ExportError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "/etc/opensm/partitions.conf:" + std::to_string(lines + 1) + ": ALL_CAS=full"),
              std::string::npos)
        << e.what();
  }
  // LaaS's own default (management hosts full by GUID) and a GUID=full base pass.
  PartitionOptions m;
  m.management = {{"SELF", Membership::kFull}, {"0x0002c90300001234", Membership::kFull}};
  const std::string own = generate_partitions({tenant("a", 0x10)}, m);
  EXPECT_NE(own.find("SELF=full,\n\t0x0002c90300001234=full ;"), std::string::npos) << own;
  m.base_text = own;
  EXPECT_EQ(generate_partitions({tenant("a", 0x10)}, m), own);
  m.base_text = "Default=0x7fff : ALL=limited, 0x0002c90300001234=full ;\n";
  EXPECT_NO_THROW(generate_partitions({tenant("a", 0x10)}, m));
}

TEST(ExportPartitionsGenerate, KeepsBaseAndReservesItsKeys) {
  PartitionOptions o;
  o.base_text = "# mine\nDefault=0x7fff,ipoib : ALL=limited, SELF=full ;\nX=0x" + [] {
    char b[8];
    std::snprintf(b, sizeof b, "%04x", pkey_hash("a"));
    return std::string(b);
  }() + " : ALL_SWITCHES=limited ;\n";
  const auto out = generate_partitions({tenant("a", 0x10)}, o);
  EXPECT_EQ(out.rfind(*o.base_text, 0), 0u) << out;  // verbatim prefix
  EXPECT_EQ(out.find("added by LaaS"), std::string::npos);
  const auto c = validate_partitions(out);
  ASSERT_TRUE(c.ok()) << errors(c);
  ASSERT_EQ(c.partitions.size(), 4u);  // Default, X, laas_a hosts (indx0), laas_a management
  EXPECT_NE(c.partitions[2].pkey, c.partitions[1].pkey);
  EXPECT_EQ(c.partitions[2].pkey, c.partitions[3].pkey);
}

// OpenSM numbers partitions without a P_Key from 0x0001 up, skipping keys in use: a tenant must
// never take those either.
TEST(ExportPartitionsGenerate, ReservesTheBaseFilesAutoNumberedKeys) {
  const std::string base =
      "Default=0x7fff : ALL=limited, SELF=full ;\nAuto : ALL_SWITCHES=limited ;\n"
      "Fixed=0x0002 : SELF=full ;\nAuto2 : SELF=full ;\nAuto : SELF=full ;\n";
  EXPECT_EQ(base_reserved_pkeys(base, "b"), (std::set<std::uint16_t>{1, 2, 3, 0x7fff}));
  PartitionOptions o;
  o.base_text = base;
  for (std::uint16_t k : {1, 2, 3}) {
    TenantRecord t = tenant("t", 0x10);
    t.pkey = k;
    EXPECT_THROW(generate_partitions({t}, o), ExportError) << k;
  }
  TenantRecord t = tenant("t", 0x10);
  t.pkey = 4;
  EXPECT_NO_THROW(generate_partitions({t}, o));
  o.base_text = base + "laas_t=0x0100 : SELF ;\n";  // the tenant's partition name, taken
  EXPECT_THROW(generate_partitions({t}, o), ExportError);
}

// indx0 puts the tenant's key at P_Key index 0 of its hosts; management ports, full members of
// every tenant partition, come in a second statement of the same key without indx0 (or every
// tenant would fight over their index 0).
TEST(ExportPartitionsGenerate, Indx0ForHostsManagementFullInASecondStatement) {
  PartitionOptions o;
  o.management = {{"SELF", Membership::kFull}, {"0x0002c90300001234", Membership::kFull}};
  TenantRecord t = tenant("t", 0x10);
  t.pkey = 0x0123;
  const auto out = generate_partitions({t}, o);
  EXPECT_NE(out.find("laas_t=0x0123, ipoib, indx0 :\n\t0x0000000000000010=full,\n"
                     "\t0x0000000000000012=full ;\n"
                     "laas_t=0x0123 :\n\tSELF=full,\n\t0x0002c90300001234=full ;\n"),
            std::string::npos)
      << out;
  o.indx0 = false;
  const auto plain = generate_partitions({t}, o);
  EXPECT_EQ(plain.find("indx0"), std::string::npos) << plain;
  EXPECT_NE(plain.find("\t0x0000000000000012=full,\n\tSELF=full,\n"), std::string::npos) << plain;
}

TEST(ExportPartitionsGenerate, NoTenantsStillWritesTheDefault) {
  const auto out = generate_partitions({}, {});
  EXPECT_NE(out.find(kDefaultPartition), std::string::npos);
  EXPECT_TRUE(validate_partitions(out).ok());
}

// The generated default must not let tenants reach each other over P_Key 0x7fff, nor the
// switches' management ports: hosts and switches are limited members (limited members talk only
// to full members), the SM a full one.
TEST(ExportPartitionsGenerate, DefaultKeepsHostsLimited) {
  const auto out = generate_partitions({}, {});
  EXPECT_EQ(out.find("ALL=full"), std::string::npos) << out;
  const auto cas = out.find("ALL_CAS=limited");
  const auto self = out.find("SELF=full");
  ASSERT_NE(cas, std::string::npos) << out;
  ASSERT_NE(out.find("ALL_SWITCHES=limited"), std::string::npos) << out;
  // OpenSM: a later member entry overwrites an earlier one for the same port, so SELF=full
  // must follow ALL_CAS=limited for an SM running on a host.
  ASSERT_NE(self, std::string::npos) << out;
  EXPECT_LT(cas, self);
  // An administrator's own 0x7fff rule is kept and nothing is added.
  PartitionOptions o;
  o.base_text = "Default=0x7fff : ALL=limited, 0x0002c90300001234=full ;\n";
  const auto with_base = generate_partitions({}, o);
  EXPECT_EQ(with_base.find("ALL_CAS=limited"), std::string::npos) << with_base;
}

// An open free pool puts every free host into the default partition: hundreds of members. They
// go one a line (OpenSM reads at most 4,094 characters of a line), and a file generated over
// its own earlier output holds that default once.
TEST(ExportPartitionsGenerate, ManyDefaultMembersStayWithinOpenSmsLineLength) {
  PartitionOptions o;
  for (int i = 1; i <= 400; ++i)
    o.management.push_back({guid_hex(0x0002c90300100000ULL + i), Membership::kFull});
  const auto out = generate_partitions({}, o);
  const auto check = validate_partitions(out);
  EXPECT_TRUE(check.ok()) << check.report("generated");
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) EXPECT_LE(line.size(), kMaxPartitionsLine);
  EXPECT_NE(out.find("SELF=full,\n\t0x0002c90300100001=full,\n"), std::string::npos) << out;
  o.base_text = out;
  const auto again = generate_partitions({}, o);
  EXPECT_EQ(again, out);
  std::size_t defaults = 0;
  for (auto at = again.find("Default="); at != std::string::npos;
       at = again.find("Default=", at + 1))
    ++defaults;
  EXPECT_EQ(defaults, 1u) << again;
}

}  // namespace
}  // namespace laas::exports

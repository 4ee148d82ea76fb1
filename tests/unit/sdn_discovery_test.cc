// laas-sdn's discovery: ibnetdiscover run as a child (its argv, its failures named, its output
// read by the project's reader) and the directed routes to the switches the read-back takes.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "sdn/discovery.h"
#include "temp_files.h"
#include "topology/ibnetdiscover.h"

namespace {

using laas::sdn::DiscoveryError;
using laas::sdn::LocalPort;
using laas::topology::Fabric;
using std::chrono::milliseconds;

// A leaf (SW_L1_0, LID 2) under a spine (SW_L2_0, LID 1), a host on the leaf and a dual-port
// server cabled to both switches, as ibnetdiscover prints them.
const char* kText = R"(
switchguid=0x200000(200000)
Switch	4 "S-0000000000200000"		# "SW_L2_0" base port 0 lid 1 lmc 0
[1]	"S-0000000000200001"[1]		# "SW_L1_0" lid 2 4xSDR
[2]	"H-0000000000100010"[2](100012) 		# "gpu 1" lid 7 4xSDR

switchguid=0x200001(200001)
Switch	4 "S-0000000000200001"		# "SW_L1_0" base port 0 lid 2 lmc 0
[1]	"S-0000000000200000"[1]		# "SW_L2_0" lid 1 4xSDR
[2]	"H-0000000000100000"[1](100001) 		# "comp-1" lid 5 4xSDR
[3]	"H-0000000000100010"[1](100011) 		# "gpu 1" lid 6 4xSDR

caguid=0x100000
Ca	1 "H-0000000000100000"		# "comp-1"
[1](100001) 	"S-0000000000200001"[2]		# lid 5 lmc 0 "SW_L1_0" lid 2 4xSDR

caguid=0x100010
Ca	2 "H-0000000000100010"		# "gpu 1"
[1](100011) 	"S-0000000000200001"[3]		# lid 6 lmc 0 "SW_L1_0" lid 2 4xSDR
[2](100012) 	"S-0000000000200000"[2]		# lid 7 lmc 0 "SW_L2_0" lid 1 4xSDR
)";

// Everything the rest of the project reads of a node, keyed by GUID so node order is free.
using Port = std::tuple<int, laas::topology::Guid, int, int, laas::topology::Guid>;
std::map<laas::topology::Guid, std::string> canonical(const Fabric& f) {
  std::map<laas::topology::Guid, std::string> out;
  for (const auto& n : f.nodes) {
    std::ostringstream s;
    s << n.name << "|" << n.is_switch << "|" << std::hex << n.port_guid << "|" << n.ca_guid << "|"
      << std::dec << n.ports.size() << "|";
    for (std::size_t p = 0; p < n.ports.size(); ++p) {
      const auto& port = n.ports[p];
      s << "[" << p << " lid " << port.lid << " guid " << std::hex << port.guid << std::dec;
      if (port.peer_node >= 0)
        s << " to " << std::hex << f.nodes[port.peer_node].guid << std::dec << ":"
          << port.peer_port;
      s << "]";
    }
    out[n.guid] = s.str();
  }
  return out;
}

Fabric offline() {
  std::istringstream in(kText);
  return laas::topology::read_ibnetdiscover(in, "t.out");
}

std::string what(const std::vector<std::string>& argv, milliseconds timeout = milliseconds(5000)) {
  try {
    laas::sdn::discover_fabric(argv, timeout);
  } catch (const DiscoveryError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(SdnDiscovery, ReadsWhatIbnetdiscoverPrintsWithTheOfflineReader) {
  const Fabric live = laas::sdn::discover_fabric({"printf", "%s", kText}, milliseconds(5000));
  EXPECT_EQ(canonical(live), canonical(offline()));
  ASSERT_EQ(live.nodes.size(), 5u) << "the dual-port server is one node per cabled port";
}

TEST(SdnDiscovery, ArgvNamesTheAdapterAndPortWhenSet) {
  laas::sdn::DiscoverOptions o;
  o.program = "/opt/diags/ibnetdiscover";
  EXPECT_EQ(laas::sdn::ibnetdiscover_argv(o), std::vector<std::string>{o.program});
  o.ca = "mlx5_0";
  o.port = 2;
  EXPECT_EQ(laas::sdn::ibnetdiscover_argv(o),
            (std::vector<std::string>{o.program, "-C", "mlx5_0", "-P", "2"}));
  o.program = "";
  const auto argv = laas::sdn::ibnetdiscover_argv(o);
  EXPECT_NE(argv[0].find("ibnetdiscover"), std::string::npos) << argv[0];
}

TEST(SdnDiscovery, TheProgramIsFoundOnPathThenInUsrSbin) {
  char dir[] = "/tmp/laas-find.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string tool = std::string(dir) + "/laas-tool";
  std::ofstream(tool) << "#!/bin/sh\n";
  ::chmod(tool.c_str(), 0755);
  EXPECT_EQ(laas::sdn::find_program("laas-tool", std::string("/nonexistent:") + dir), tool);
  EXPECT_EQ(laas::sdn::find_program("laas-no-such-tool", dir), "laas-no-such-tool");
  EXPECT_EQ(laas::sdn::find_program("./x/y", dir), "./x/y");
  if (::access("/usr/sbin/ibnetdiscover", X_OK) == 0) {
    EXPECT_EQ(laas::sdn::find_program("ibnetdiscover", dir), "/usr/sbin/ibnetdiscover");
  }
  ::unlink(tool.c_str());
  ::rmdir(dir);
}

TEST(SdnDiscovery, AFailureNamesTheCommandItsStatusAndStderrsLastLine) {
  const auto e = what({"sh", "-c", "echo first >&2; echo 'ibwarn: no port' >&2; exit 3"});
  EXPECT_NE(e.find("'sh -c echo first"), std::string::npos) << e;
  EXPECT_NE(e.find("exit status 3; stderr: ibwarn: no port"), std::string::npos) << e;
  EXPECT_EQ(e.find("stderr: first"), std::string::npos) << e;
  EXPECT_NE(what({"/nonexistent/ibnetdiscover"}).find("cannot run /nonexistent/ibnetdiscover"),
            std::string::npos);
  const auto slow = what({"sleep", "5"}, milliseconds(200));
  EXPECT_NE(slow.find("'sleep 5' failed: timed out after 200 ms"), std::string::npos) << slow;
  const auto bad = what({"echo", "garbage"});
  EXPECT_NE(bad.find("'echo garbage':1: unrecognized line"), std::string::npos) << bad;
}

// laas-sdn --check: the ibnetdiscover discovery would run, started with --version; a problem
// names the path tried (or where the name was looked for).
std::string discovery_check(const std::string& program, const std::string& path_env,
                            std::string* found, std::string* said) {
  return laas::sdn::ibnetdiscover_problem(program, path_env, milliseconds(5000), found, said);
}

void write_tool(const std::string& path, const std::string& script, unsigned mode = 0755) {
  std::ofstream(path) << "#!/bin/sh\n" << script << "\n";
  ::chmod(path.c_str(), mode);
}

TEST(SdnDiscovery, CheckRunsTheIbnetdiscoverFoundAndNamesItsPath) {
  laas::test::TempDir dir("laas-check");
  std::string found, said;
  write_tool(dir.path + "/ibnetdiscover", "echo 'ibnetdiscover BUILD VERSION: 44.0' >&2");
  EXPECT_EQ(discovery_check("", "/nonexistent:" + dir.path, &found, &said), "");
  EXPECT_EQ(found, dir.path + "/ibnetdiscover");
  EXPECT_EQ(said, "ibnetdiscover BUILD VERSION: 44.0");
  // A path named in sdn.ibnetdiscover, and its arguments: --version reads no fabric.
  write_tool(dir.path + "/diags", "echo \"$@\"");
  EXPECT_EQ(discovery_check(dir.path + "/diags", "", &found, &said), "");
  EXPECT_EQ(said, "--version");
}

TEST(SdnDiscovery, CheckSaysWhichPathItTriedWhenItCannotRun) {
  laas::test::TempDir dir("laas-check");
  std::string found, said;
  auto e = discovery_check("laas-no-such-ibnetdiscover", dir.path, &found, &said);
  EXPECT_NE(
      e.find("'laas-no-such-ibnetdiscover' is not on PATH (" + dir.path + ") nor in /usr/sbin"),
      std::string::npos)
      << e;
  e = discovery_check(dir.path + "/missing", dir.path, &found, &said);
  EXPECT_NE(e.find("'" + dir.path + "/missing --version' failed: cannot run " + dir.path +
                   "/missing: No such file"),
            std::string::npos)
      << e;
  write_tool(dir.path + "/readonly", "exit 0", 0644);
  e = discovery_check(dir.path + "/readonly", "", &found, &said);
  EXPECT_NE(e.find("cannot run " + dir.path + "/readonly: Permission denied"), std::string::npos)
      << e;
  write_tool(dir.path + "/broken",
             "echo 'libibumad.so.3: cannot open shared object' >&2; exit 127");
  e = discovery_check(dir.path + "/broken", "", &found, &said);
  EXPECT_NE(e.find("'" + dir.path + "/broken --version' failed: exit status 127; stderr: " +
                   "libibumad.so.3: cannot open shared object"),
            std::string::npos)
      << e;
}

TEST(SdnDiscovery, RoutesReachEverySwitchFromAnAdapterOrASwitch) {
  const Fabric f = offline();
  using Routes = std::map<laas::topology::Guid, std::string>;
  // comp-1's port 1 is on the leaf.
  EXPECT_EQ(laas::sdn::switch_routes(f, {false, 0x100000, 0x100001, 1}),
            (Routes{{0x200001, "0,1"}, {0x200000, "0,1,1"}}));
  // The dual-port server's port 2 (a node of its own in the fabric) is on the spine.
  EXPECT_EQ(laas::sdn::switch_routes(f, {false, 0x100010, 0x100012, 2}),
            (Routes{{0x200000, "0,2"}, {0x200001, "0,2,1"}}));
  // From a switch: its management port.
  EXPECT_EQ(laas::sdn::switch_routes(f, {true, 0x200000, 0x200000, 0}),
            (Routes{{0x200000, "0"}, {0x200001, "0,1"}}));
  // A port the fabric does not hold: nothing to route from.
  EXPECT_EQ(laas::sdn::local_node(f, {false, 0x100000, 0x999, 1}), -1);
  EXPECT_TRUE(laas::sdn::switch_routes(f, {false, 0x100000, 0x999, 1}).empty());
}

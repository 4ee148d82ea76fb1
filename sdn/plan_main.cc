// laas-sdn-plan: one pass of laas-sdn's fabric side, for an SM that does not load the plugin.
// Reads the fabric (live by running ibnetdiscover, or an ibnetdiscover file), places the tenants
// given, computes the isolating tables on the LIDs the SM assigned, writes the lfts_file of
// OpenSM's file routing engine and the partitions.conf atomically, then runs the reload
// command (an argv, no shell). With --readback it instead compares an lfts_file with tables
// read back from the switches (dump_fts output), with --readback-live with the tables it reads
// from the switches itself.
#include <CLI/CLI.hpp>
#include <chrono>
#include <fstream>
#include <iostream>

#include "export/output.h"
#include "routing/ibroute.h"
#include "sdn/lfts_file.h"
#include "sdn/mad_port.h"
#include "sdn/plan.h"
#include "sdn/readback.h"
#include "sdn/reload.h"
#include "topology/ibnetdiscover.h"
#include "util/cli_parse.h"
#include "util/guid.h"

using namespace laas;

namespace {

struct Options {
  std::string ibnetdiscover, ca, lfts_file, partitions_file, allocations, readback, sm_guid;
  std::string program;  // the ibnetdiscover to run ("": on PATH, else /usr/sbin)
  int port = 0;
  bool live = false;
  double reload_timeout = 10;
  std::vector<std::string> tenants, reload;
};

std::vector<routing::DumpedTable> read_dump(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open");
  return routing::parse_ibroute(in, path);
}

sdn::DiscoverOptions discover_options(const Options& o) {
  sdn::DiscoverOptions d;
  d.program = o.program;
  d.ca = o.ca;
  d.port = o.port;
  return d;
}

// Every switch of the file that discovery finds, read from the switch by directed route.
std::vector<routing::DumpedTable> read_live(const Options& o,
                                            const std::vector<routing::DumpedTable>& wrote) {
  sdn::MadPort reader({o.ca, o.port, 0, 4});
  const auto paths = sdn::switch_routes(sdn::discover_fabric(discover_options(o)), reader.local());
  std::vector<routing::DumpedTable> out;
  for (const auto& w : wrote) {
    const auto it = paths.find(w.guid);
    if (it == paths.end()) continue;  // not found now: compare_readback says so
    auto r = w;
    r.table = reader.read(it->second, w.table.empty() ? 0 : w.table.size() - 1);
    out.push_back(std::move(r));
  }
  return out;
}

// --readback / --readback-live: exit 0 when every switch of the file reads back as written.
int compare(const Options& o) {
  const auto wrote = read_dump(o.lfts_file);
  const auto r = sdn::compare_readback(wrote, o.live ? read_live(o, wrote) : read_dump(o.readback));
  for (const auto& line : r.lines) std::cout << line << "\n";
  std::cout << (r.applied() ? "applied" : "NOT applied") << ": " << r.switches << " switches, "
            << r.entries << " LIDs compared, " << r.differing << " differ, " << r.missing_switches
            << " not read back\n";
  return r.applied() ? 0 : 1;
}

sdn::PlanRequest request(const Options& o, topology::Guid local_port) {
  sdn::PlanRequest req;
  req.sm_port_guid = o.sm_guid.empty() ? local_port : util::guid_or_throw(o.sm_guid);
  for (const auto& t : o.tenants) {
    const auto colon = t.rfind(':');
    std::size_t used = 0;
    int hosts = 0;
    try {
      hosts = colon == std::string::npos ? 0 : std::stoi(t.substr(colon + 1), &used);
    } catch (const std::exception&) {
    }
    if (colon == std::string::npos || colon == 0 || hosts < 1 || used != t.size() - colon - 1)
      throw CLI::ValidationError("--tenant", "'" + t + "' is not NAME:HOSTS");
    req.tenants.push_back({t.substr(0, colon), hosts});
  }
  return req;
}

int plan(const Options& o) {
  topology::Fabric fabric;
  topology::Guid local = 0;
  if (!o.ibnetdiscover.empty()) {
    fabric = topology::read_ibnetdiscover_file(o.ibnetdiscover);
  } else {
    fabric = sdn::discover_fabric(discover_options(o));
    sdn::MadPort port({o.ca, o.port, 0, 4});
    const auto here = port.local();
    const int self = sdn::local_node(fabric, here);
    local = self < 0 ? here.port_guid : fabric.nodes[self].port_guid;
  }
  const auto p = sdn::make_plan(fabric, request(o, local));
  const auto& tree = *p.rec.tree;
  std::cout << "fabric: " << fabric.nodes.size() << " nodes, recognized " << tree.spec().text()
            << " (" << tree.num_hosts() << " hosts)\n";
  for (const auto& [name, t] : p.allocations.tenants) {
    std::cout << "tenant " << name << ":";
    for (const auto& h : t.hosts) std::cout << " " << h.name;
    std::cout << "\n";
  }
  for (const auto& w : p.warnings) std::cout << "warning: " << w << "\n";
  if (!o.lfts_file.empty()) {
    sdn::write_lfts_file(o.lfts_file, fabric, p.tables);
    std::cout << "wrote " << o.lfts_file << "\n";
  }
  if (!o.partitions_file.empty()) {
    exports::write_output_file(o.partitions_file, p.partitions);
    std::cout << "wrote " << o.partitions_file << "\n";
  }
  if (!o.allocations.empty()) {
    exports::write_output_file(o.allocations, allocation::to_json(p.allocations));
    std::cout << "wrote " << o.allocations << "\n";
  }
  if (o.reload.empty()) return 0;
  const auto ms = std::chrono::milliseconds(static_cast<long long>(o.reload_timeout * 1000));
  const auto r = sdn::run_reload(o.reload, ms);
  std::cout << r.summary(o.reload) << "\n";
  return r.ok() ? 0 : 3;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "One pass of laas-sdn's fabric side: discover, place tenants, compute, write the "
      "lfts_file and partitions.conf, reload the SM.",
      "laas-sdn-plan"};
  Options o;
  app.add_option("--ibnetdiscover", o.ibnetdiscover,
                 "read the fabric from ibnetdiscover output instead of discovering it");
  app.add_option("--ibnetdiscover-program", o.program,
                 "the ibnetdiscover to run (default: found on PATH, else in /usr/sbin)");
  app.add_option("--ca", o.ca, "local adapter to discover through (default: the first)");
  app.add_option("--port", o.port, "its port (default: the first active)");
  app.add_option("--tenant", o.tenants, "NAME:HOSTS, placed in the order given");
  app.add_option("--sm-port-guid", o.sm_guid,
                 "the SM's port GUID (default: the local port discovery started from)");
  app.add_option("--lfts-file", o.lfts_file, "the lfts_file to write (or, with --readback, read)");
  app.add_option("--partitions-file", o.partitions_file, "the partitions.conf to write");
  app.add_option("--allocations", o.allocations, "allocations.json to write (for laas-audit)");
  app.add_option("--readback", o.readback,
                 "compare --lfts-file with these tables read back (dump_fts output)");
  app.add_flag("--readback-live", o.live,
               "compare --lfts-file with the tables read from the switches now (libibmad)");
  app.add_option("--reload-timeout", o.reload_timeout, "seconds")->capture_default_str();
  app.add_option("RELOAD", o.reload, "after --: the reload command, e.g. -- kill -HUP PID");
  if (const int rc = util::parse_command_line(app, argc, argv); rc >= 0) return rc;
  try {
    if (!o.readback.empty() || o.live) {
      if (o.lfts_file.empty()) throw CLI::ValidationError("--readback", "needs --lfts-file");
      return compare(o);
    }
    return plan(o);
  } catch (const CLI::ValidationError& e) {
    std::cerr << "laas-sdn-plan: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "laas-sdn-plan: " << e.what() << "\n";
    return 1;
  }
}

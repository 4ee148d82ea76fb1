// laas-sl2vl-dump: reads every switch's SL2VL tables back from the fabric, one SMP per
// (input port, output port), and prints them in `smpquery sl2vl LID OUTPORT`'s format (which
// laas-audit --sl2vl reads). smpquery does the same per output port but costs a process start
// each; a 3-level test tree has hundreds of them.
//   laas-sl2vl-dump --fabric ibnetdiscover.out > sl2vl.out
// Exit 0 ok, 1 a query failed, 2 bad input.
#include <infiniband/mad.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "routing/sl2vl.h"
#include "topology/ibnetdiscover.h"
#include "util/cli_parse.h"

int main(int argc, char** argv) {
  CLI::App app{"Read every switch's SL2VL tables (per input and output port) from the fabric.",
               "laas-sl2vl-dump"};
  std::string fabric_path, ca;
  int ca_port = 0, timeout_ms = 0;
  app.add_option("--fabric", fabric_path, "ibnetdiscover output naming the switches and LIDs")
      ->required();
  app.add_option("--ca", ca, "local CA to use (default: the first active port)");
  app.add_option("--port", ca_port, "local CA port");
  app.add_option("--timeout", timeout_ms, "MAD timeout in ms (0: libibmad's default)");
  if (const int rc = laas::util::parse_command_line(app, argc, argv); rc >= 0) return rc;

  laas::topology::Fabric fabric;
  try {
    fabric = laas::topology::read_ibnetdiscover_file(fabric_path);
  } catch (const std::exception& e) {
    std::cerr << "laas-sl2vl-dump: " << e.what() << "\n";
    return 2;
  }
  int classes[] = {IB_SMI_CLASS, IB_SMI_DIRECT_CLASS};
  struct ibmad_port* port =
      mad_rpc_open_port(ca.empty() ? nullptr : const_cast<char*>(ca.c_str()), ca_port, classes, 2);
  if (!port) {
    std::cerr << "laas-sl2vl-dump: cannot open the local port\n";
    return 1;
  }
  int failed = 0;
  for (std::size_t n = 0; n < fabric.nodes.size(); ++n) {
    const auto& node = fabric.nodes[n];
    if (!node.is_switch) continue;
    const int lid = fabric.lid_of(static_cast<int>(n));
    const int nports = static_cast<int>(node.ports.size());
    for (int out = 1; out < nports; ++out) {
      if (node.ports[out].peer_node < 0) continue;  // OpenSM leaves down ports alone
      std::printf("# SL2VL table: Lid %d\n#                 SL: |", lid);
      for (int s = 0; s < 16; ++s) std::printf("%2d|", s);
      std::printf("\n");
      for (int in = 0; in < nports; ++in) {
        ib_portid_t id{};
        ib_portid_set(&id, lid, 0, 0);
        std::uint8_t data[IB_SMP_DATA_SIZE] = {0};
        // A loaded simulator (or fabric) loses a MAD now and then: retry before giving up.
        bool ok = false;
        for (int attempt = 0; attempt < 4 && !ok; ++attempt)
          ok = smp_query_via(data, &id, IB_ATTR_SLVL_TABLE, static_cast<unsigned>((in << 8) | out),
                             static_cast<unsigned>(timeout_ms), port) != nullptr;
        if (!ok) {
          std::fprintf(stderr, "laas-sl2vl-dump: SL2VL query failed: lid %d in %d out %d\n", lid,
                       in, out);
          ++failed;
          continue;
        }
        std::printf("ports: in %2d, out %2d: |", in, out);
        for (int s = 0; s < 16; ++s) {
          const int vl = s % 2 == 0 ? data[s / 2] >> 4 : data[s / 2] & 0xf;
          std::printf("%2d|", vl);
        }
        std::printf("\n");
      }
    }
  }
  mad_rpc_close_port(port);
  return failed ? 1 : 0;
}

// laas-lid-order: a guid2lid file for OpenSM with the LIDs numbered leaf by leaf
// (topology/lid_order.h), from an ibnetdiscover dump of the fabric.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <string>

#include "topology/ibnetdiscover.h"
#include "topology/lid_order.h"
#include "topology/recognize.h"
#include "util/cli_parse.h"
#include "util/durable_file.h"

int main(int argc, char** argv) {
  CLI::App app{
      "Write OpenSM's guid2lid file with the LIDs numbered leaf by leaf: the hosts of each leaf\n"
      "in the tree's order, then the switches, then the ports outside the tree. A tenant's\n"
      "LIDs then fill a few 64-LID blocks of each forwarding table, and a tenant change sends\n"
      "that many LFT blocks a switch. Install it as guid2lid in OpenSM's cache directory\n"
      "(OSM_CACHE_DIR, /var/cache/opensm) while OpenSM is stopped; OpenSM gives these LIDs at\n"
      "its next start (the hosts' LIDs change once).",
      "laas-lid-order"};
  std::string input, output, declared;
  int lmc = 0;
  app.add_option("IBNETDISCOVER", input, "ibnetdiscover's output for the fabric")->required();
  app.add_option("-o,--output", output, "file to write (default: standard output)");
  app.add_option("--topology", declared, "the spec the tree must be (laas.yaml's topology:)");
  app.add_option("--lmc", lmc, "OpenSM's lmc: 2^lmc LIDs a port, aligned (default 0)")
      ->check(CLI::Range(0, 7));
  if (const int rc = laas::util::parse_command_line(app, argc, argv); rc >= 0) return rc;
  try {
    const auto fabric = laas::topology::read_ibnetdiscover_file(input);
    laas::topology::RecognizeOptions options;
    options.declared = declared;
    const auto rec = laas::topology::recognize(fabric, options);
    if (!rec.ok()) {
      std::cerr << "laas-lid-order: " << input << ": not a fat-tree: " << rec.error << "\n";
      return 1;
    }
    const auto lids = laas::topology::leaf_ordered_lids(fabric, *rec.tree, rec.embedding, lmc);
    const std::string text = laas::topology::format_guid2lid(lids);
    if (output.empty())
      std::cout << text;
    else
      laas::util::write_file_atomically(output, text, 0644);
    std::cerr << "laas-lid-order: " << lids.size() << " ports of " << rec.tree->spec().text()
              << ", LIDs 0x0001-0x" << std::hex << (lids.empty() ? 0 : lids.back().last) << std::dec
              << (output.empty() ? "" : " written to " + output) << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "laas-lid-order: " << e.what() << "\n";
    return 1;
  }
}

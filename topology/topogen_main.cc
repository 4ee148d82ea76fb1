// laas-topogen: write an ibsim/ibnetdiscover net file for a fat-tree spec.
#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>

#include "topology/netfile.h"
#include "util/cli_parse.h"

int main(int argc, char** argv) {
  CLI::App app{
      "Write an ibsim / ibnetdiscover net file for a fat-tree.\n"
      "Hosts are named comp-1.., switches SW_L<level>_<index>; on every switch the up-ports\n"
      "come first, then the down-ports.",
      "laas-topogen"};
  std::string spec_text, output;
  bool summary = false;
  laas::topology::NetfileOptions options;
  app.add_option("SPEC", spec_text, "xgft(h;m1,..;w1,..) or pgft(h;m..;w..;p..)")->required();
  app.add_option("-o,--output", output, "file to write (default: standard output)");
  app.add_flag("--summary", summary, "print the tree's sizes instead of the net file");
  app.add_option("--rails", options.rails,
                 "servers with one port on each of R rail leaves: leaf i is rail i % R of server "
                 "group i / R; servers srv<n>, HCAs 'srv<n> mlx5_<r>' (default 1: comp-<n>)")
      ->check(CLI::Range(1, 64));
  app.add_flag("--dual-port", options.multi_port,
               "with --rails R: one HCA of R ports per server ('srv<n>') instead of R HCAs");
  if (const int rc = laas::util::parse_command_line(app, argc, argv); rc >= 0) return rc;
  try {
    const auto tree = laas::topology::FatTree::parse(spec_text);
    if (summary) {
      std::cout << tree.spec().text() << ": " << tree.num_hosts() << " hosts";
      for (int l = 1; l <= tree.height(); ++l)
        std::cout << ", " << tree.num_switches(l) << " L" << l << " switches";
      std::cout << ", " << tree.total_links() << " switch-to-switch links\n";
      return 0;
    }
    if (output.empty()) {
      laas::topology::write_netfile(tree, std::cout, options);
    } else {
      std::ofstream out(output);
      if (!out) {
        std::cerr << "laas-topogen: cannot write " << output << "\n";
        return 1;
      }
      laas::topology::write_netfile(tree, out, options);
    }
  } catch (const laas::topology::SpecError& e) {
    std::cerr << "laas-topogen: bad topology '" << spec_text << "': " << e.what() << "\n";
    return 2;
  }
  return 0;
}

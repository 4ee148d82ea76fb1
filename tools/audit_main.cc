// laas-audit: offline isolation audit of a real fabric's forwarding tables.
//   laas-audit --fabric ibnetdiscover.out --lfts dump_fts.out --allocations allocations.json
//              [--mfts dump_fts_M.out]
//              [--sl2vl sl2vl.out]   (smpquery sl2vl / laas-sl2vl-dump output)
// Recognizes the fat-tree, maps the allocations (by GUID) onto it, traces every relevant
// pair through the tables read back from the switches and reports isolation violations and
// each tenant's balance against the same tenant routed alone. Exit 0 clean, 1 violations,
// 2 bad input.
#include <iostream>

#include "tools/audit_cli.h"
#include "util/cli_parse.h"

int main(int argc, char** argv) {
  using namespace laas::tools;
  CLI::App app{"Audit a fat-tree's real forwarding tables against LaaS tenant allocations.",
               "laas-audit"};
  AuditOptions options;
  add_audit_options(app, options);
  if (const int rc = laas::util::parse_command_line(app, argc, argv); rc >= 0) return rc;
  try {
    AuditInputs inputs;
    load_audit_inputs(options, inputs);
    if (options.owners) return print_owners(inputs);
    if (!options.sl2vl_of.empty()) return print_sl2vl_of(options, inputs);
    if (!options.paths_of.empty()) return print_paths(options, inputs);
    return audit_and_report(options, inputs);
  } catch (const BadInput& e) {
    std::cerr << "laas-audit: " << e.what() << "\n";
    return 2;
  }
}

#include <fstream>
#include <sstream>

#include "routing/ibroute.h"
#include "routing/mft_dump.h"
#include "tools/audit_cli.h"
#include "topology/ibnetdiscover.h"
#include "util/guid.h"

namespace laas::tools {

void add_audit_options(CLI::App& app, AuditOptions& o) {
  app.add_option("--fabric", o.fabric_path, "ibnetdiscover output (or an ibsim net file)")
      ->required();
  app.add_option("--lfts", o.lfts_path, "dump_fts / dump_lfts.sh / ibroute output")->required();
  app.add_option("--allocations", o.alloc_path, "allocations.json written by the plugin");
  app.add_option("--layout", o.layout_path,
                 "layout.json written by the plugin: the intended tree, so parts that are down "
                 "keep their identities");
  app.add_option("--mfts", o.mfts_path,
                 "multicast tables (dump_fts -M / ibroute -M output): audit them too");
  app.add_option("--sl2vl", o.sl2vl_path,
                 "SL2VL tables read back (smpquery sl2vl / laas-sl2vl-dump output): trace every "
                 "host pair through them and compare them with the first-hop drop plan");
  app.add_option("--management", o.management,
                 "extra management node or port GUIDs (the SM's port is read from allocations)");
  app.add_option("--max-findings", o.max_findings,
                 "findings listed per kind (counts are complete)");
  app.add_flag("--json", o.as_json, "print the report as JSON");
  app.add_option("--paths", o.paths_of,
                 "instead of auditing, print the path (switch:port hops) of every ordered pair "
                 "of this tenant's hosts, as read from the tables");
  app.add_option("--sl2vl-of", o.sl2vl_of,
                 "instead of auditing, print the SL2VL verdict read back for every (input, "
                 "output) port pair that touches this tenant's ports (needs --sl2vl)");
  app.add_flag("--owners", o.owners,
               "instead of auditing, print each leaf's hosts with their owner (tenant, free, "
               "management)");
}

namespace {

// `path` opened for reading, or BadInput.
std::ifstream open_input(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw BadInput(path + ": cannot open");
  return in;
}

void load_layout(const std::string& path, topology::Layout& layout) {
  std::ifstream in = open_input(path);
  std::stringstream text;
  text << in.rdbuf();
  try {
    layout = topology::parse_layout(text.str());
  } catch (const std::exception& e) {
    throw BadInput(path + ": " + e.what());
  }
}

}  // namespace

void load_audit_inputs(const AuditOptions& o, AuditInputs& in) {
  try {
    in.fabric = topology::read_ibnetdiscover_file(o.fabric_path);
  } catch (const std::exception& e) {
    throw BadInput(e.what());
  }
  topology::RecognizeOptions recognize_options;
  if (!o.layout_path.empty()) {
    load_layout(o.layout_path, in.layout);
    recognize_options.layout = &in.layout;
  }
  in.rec = topology::recognize(in.fabric, recognize_options);
  if (!in.rec.ok())
    throw BadInput(o.fabric_path + ": the fabric is not a fat-tree: " + in.rec.error);
  {
    std::ifstream lfts = open_input(o.lfts_path);
    try {
      in.tables = routing::tables_by_node(in.fabric, routing::parse_ibroute(lfts, o.lfts_path));
    } catch (const std::exception& e) {
      throw BadInput(e.what());
    }
  }
  if (!o.alloc_path.empty()) {
    decltype(allocation::load_allocations(o.alloc_path)) a;
    try {
      a = allocation::load_allocations(o.alloc_path);
    } catch (const std::exception& e) {
      throw BadInput(e.what());
    }
    if (!a) throw BadInput(o.alloc_path + ": cannot open");
    in.alloc = std::move(*a);
  }
  std::vector<topology::Guid> extra;
  for (const auto& g : o.management) {
    try {
      extra.push_back(util::guid_or_throw(g));
    } catch (const std::exception& e) {
      throw BadInput(std::string("--management: ") + e.what());
    }
  }
  if (!o.mfts_path.empty()) {
    std::ifstream mfts = open_input(o.mfts_path);
    try {
      in.mfts = routing::mfts_by_node(in.fabric, routing::parse_ibroute_mft(mfts, o.mfts_path));
    } catch (const std::exception& e) {
      throw BadInput(e.what());
    }
  }
  try {
    in.input = allocation::audit_input(in.rec, in.fabric, in.tables, in.alloc, extra);
    if (!o.layout_path.empty()) in.input.layout = &in.layout;
  } catch (const std::exception& e) {
    throw BadInput(o.alloc_path + ": " + e.what());
  }
  if (!o.sl2vl_path.empty()) {
    std::ifstream sl2vl = open_input(o.sl2vl_path);
    try {
      in.sl2vl = routing::parse_sl2vl(sl2vl, in.fabric, o.sl2vl_path);
    } catch (const std::exception& e) {
      throw BadInput(e.what());
    }
    in.input.sl2vl = &in.sl2vl;
  }
}

}  // namespace laas::tools

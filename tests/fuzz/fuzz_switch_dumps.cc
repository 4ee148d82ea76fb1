// The readers of tables read back from switches, which laas-audit takes from files: unicast
// (ibroute / dump_fts), multicast (ibroute -M / dump_fts -M) and SL2VL (smpquery sl2vl /
// laas-sl2vl-dump). Each input goes to all three; what reads is placed on the lab tree's model
// fabric (by GUID, by LID), as laas-audit does with its --fabric. Only the readers' own errors
// may come out.
#include <cstdint>
#include <sstream>
#include <string>

#include "routing/ibroute.h"
#include "routing/mft_dump.h"
#include "routing/sl2vl.h"
#include "topology/embedding.h"

namespace {

const laas::topology::Fabric& lab_fabric() {
  static const laas::topology::Fabric fabric =
      laas::topology::build_model_fabric(laas::topology::FatTree::parse("xgft(2;4,8;1,4)")).first;
  return fabric;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto& fabric = lab_fabric();
  try {
    std::istringstream in(text);
    (void)laas::routing::tables_by_node(fabric, laas::routing::parse_ibroute(in, "fuzz"));
  } catch (const laas::routing::DumpError&) {
  }
  try {
    std::istringstream in(text);
    (void)laas::routing::mfts_by_node(fabric, laas::routing::parse_ibroute_mft(in, "fuzz"));
  } catch (const laas::routing::DumpError&) {
  }
  try {
    std::istringstream in(text);
    (void)laas::routing::parse_sl2vl(in, fabric, "fuzz");
  } catch (const laas::routing::Sl2VlDumpError&) {
  }
  return 0;
}

// The forwarding tables as the `file` routing engine of OpenSM reads them (`routing_engine
// file` with `lfts_file`): the format dump_lfts and OpenSM's own opensm-lfts.dump print, kept
// by every OpenSM-family SM (upstream, NVIDIA's, UFM). It is how laas-sdn hands an SM that does
// not load the plugin the tables the project computed.
//
// What the engine does with the file (osm_ucast_file.c, checked under ibsim):
//  - each "Unicast lids ... guid 0x<hex> ..." header starts a switch, found by node GUID
//    (a GUID the SM does not know skips the block); its table is first cleared, so every LID
//    the block does not list is unrouted (0xFF), and so is every LID of a switch the file does
//    not list at all;
//  - each "0x<lid> <port> ..." line sets one entry; with " portguid 0x<hex>" after it the entry
//    follows that port to the LID the SM gives it now;
//  - a port at or beyond the switch's port count aborts the whole file, and the SM then routes
//    with the next engine (with minhop unless `no_fallback` follows `file`): so the writer
//    refuses such tables rather than writes them.
#pragma once

#include <string>

#include "routing/routing.h"
#include "topology/fabric.h"

namespace laas::sdn {

// Tables that cannot be written as they are (an entry on a port the switch lacks, a table on
// a node that is no switch): nothing is written.
class LftsError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The file's text: a comment naming its writer, then one block per switch that has a table
// (in switch node GUID order), every entry other than kNoRoute listed. `tables` is indexed by
// fabric node, as routing::to_lid_tables gives it. Throws LftsError.
std::string lfts_text(const topology::Fabric& fabric, const routing::LidTables& tables);

// lfts_text written to `path` atomically (exports::write_output_file: a temporary file in the
// same directory, fsync, rename, fsync of the directory): the SM reads the old file or the new
// one, never a part. Throws LftsError, or std::runtime_error naming the path.
void write_lfts_file(const std::string& path, const topology::Fabric& fabric,
                     const routing::LidTables& tables);

}  // namespace laas::sdn

// Reads the unicast tables printed by `dump_fts` / `dump_lfts.sh` / `ibroute` (one block per
// switch: a "Unicast lids [..] of switch ... guid 0x<guid> (<name>):" header, then
// "0x<lid> <port> : ..." lines) into LID-indexed tables aligned with a Fabric's nodes.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "topology/fabric.h"

namespace laas::tools {

// [fabric node] -> LID-indexed ports (0xFF: no route); empty for nodes without a block.
// Throws std::runtime_error naming the line (bad syntax, a switch GUID not in the fabric).
std::vector<std::vector<std::uint8_t>> read_lft_dump(std::istream& in,
                                                     const topology::Fabric& fabric,
                                                     const std::string& source);

}  // namespace laas::tools

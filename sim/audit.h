// Offline audit of a --log file: replays every ADD/REM and re-verifies the fabric with the
// independent checker after each one. Pure apart from the stream it reads.
#pragma once

#include <istream>
#include <optional>
#include <string>
#include <vector>

#include "topology/fat_tree.h"

namespace laas::sim {

struct AuditReport {
  long adds = 0, removes = 0;
  long l1_added = 0, l2_added = 0;
  std::vector<std::string> problems;  // "name:line: ..." ; empty means the log is legal
};

// check_every: run check::check_all every N transactions (1 = after each) and at the end;
// each ADD is always shape-checked when the log says the algorithm isolates.
AuditReport audit_log(const topology::FatTree& tree, std::istream& in, const std::string& name,
                      int check_every = 1, int max_problems = 20);

// A log's "# laas-sim log topology=T algorithm=A isolated=0|1 rails=R ..." line (sim/io.cc
// writes it); nullopt for any other line. A bad rails value is reported, not thrown.
struct LogHeader {
  std::string topology;  // empty when the header names none
  bool isolated = true;
  int rails = 1;
  std::string rails_error;
};
std::optional<LogHeader> parse_log_header(const std::string& line);

// The tree a log was written for, from its "# laas-sim log topology=..." header; empty when
// the log has no such header. A log checked against another tree fails on its first line, so
// the audit takes the tree from here.
std::string logged_topology(std::istream& in);

}  // namespace laas::sim

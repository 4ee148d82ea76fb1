// File-system edges of laas-sim: reading (gzip-aware) workloads and size PDFs, writing logs,
// per-tenant CSV and JSON, and drawing plots with gnuplot.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "sim/bound.h"
#include "sim/generator.h"
#include "sim/machine.h"
#include "sim/simulator.h"
#include "sim/workload.h"

namespace laas::sim {

// Whole file as text, transparently gunzipped when it starts with the gzip magic. Throws
// std::runtime_error naming the file.
std::string read_text_file(const std::string& path);

// By extension: *.swf and *.swf.gz are SWF, anything else the release CSV.
Workload load_workload(const std::string& path, int* swf_skipped = nullptr);
std::vector<std::pair<int, double>> load_size_pdf(const std::string& path);

// One line per transaction:
//   ADD|REM <time> <id> <requested> hosts <n> <h...> links <m> <l...>
// preceded by a "# laas-sim log" header naming the topology and algorithm. Hosts and links
// are the ids of topology/fat_tree.h.
TransactionSink log_sink(std::ostream& out);
// rails > 1: a rail-optimized tree as laas-topogen --rails builds it ("rails=R" in the header,
// so that laas-sim audit checks placements rail by rail).
void write_log_header(std::ostream& out, const FatTree& tree, const std::string& algorithm,
                      bool isolating, int rails = 1);

void write_tenant_csv(std::ostream& out, const Workload& w, const SimResult& r);

nlohmann::json to_json(const SimResult& r);

// Runs gnuplot on a script; returns false (and says why in *err) if it is missing or fails.
bool run_gnuplot(const std::string& script, std::string* err);

// A solver for the bound's models: glpsol (Debian's glpk-utils) on a temporary file, at most
// `seconds` each (then kUnknown). Throws std::runtime_error if glpsol cannot be run.
LpSolver glpsol_solver(double seconds);

}  // namespace laas::sim

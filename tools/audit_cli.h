// laas-audit's parts: the options, the inputs every mode reads (the shared option layer), and
// one function a mode (the audit report, --owners, --sl2vl-of, --paths).
#pragma once

#include <CLI/CLI.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "allocation/allocations.h"
#include "routing/audit.h"
#include "routing/multicast.h"
#include "routing/sl2vl.h"
#include "topology/layout.h"
#include "topology/recognize.h"

namespace laas::tools {

struct AuditOptions {
  std::string fabric_path, lfts_path, alloc_path, layout_path, mfts_path, sl2vl_path;
  std::vector<std::string> management;
  bool as_json = false;
  std::string paths_of, sl2vl_of;
  bool owners = false;
  int max_findings = 10;
};

void add_audit_options(CLI::App& app, AuditOptions& o);

// Bad input: the message laas-audit prints before it exits 2.
class BadInput : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The fabric read back, recognized, with its tables, the allocations mapped onto it and the
// tables of the optional inputs. The audit input points into it: it is filled in place.
struct AuditInputs {
  topology::Fabric fabric;
  topology::Layout layout;
  topology::Recognition rec;
  routing::LidTables tables;
  allocation::Allocations alloc;
  routing::Mfts mfts;
  routing::Sl2VlTables sl2vl;
  routing::AuditInput input;

  AuditInputs() = default;
  AuditInputs(const AuditInputs&) = delete;
  AuditInputs& operator=(const AuditInputs&) = delete;
};

// Reads every input the options name, in the order the options list them. Throws BadInput.
void load_audit_inputs(const AuditOptions& o, AuditInputs& in);

// The modes: each prints its output and returns the exit code; throws BadInput.
int print_owners(const AuditInputs& in);                             // --owners
int print_sl2vl_of(const AuditOptions& o, const AuditInputs& in);    // --sl2vl-of TENANT
int print_paths(const AuditOptions& o, const AuditInputs& in);       // --paths TENANT
int audit_and_report(const AuditOptions& o, const AuditInputs& in);  // the audit

}  // namespace laas::tools

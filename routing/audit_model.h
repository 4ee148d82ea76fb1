// The audit's model (audit.h): the fabric, the tree's embedding and the LID tables, with every
// host's class, every link's owner and which physical port is which model link. The checks
// (audit_checks.h) read it; the traversers (audit_trace.h) walk it. Internal to routing/.
#pragma once

#include <string>
#include <vector>

#include "routing/audit.h"

namespace laas::routing::auditing {

constexpr int kFreeClass = -1;
constexpr int kMgmtClass = -2;
constexpr int kMaxHops = 64;

struct AuditModel {
  // Throws std::invalid_argument when the embedding does not match the tree or the tables the
  // fabric.
  explicit AuditModel(const AuditInput& input);

  const AuditInput& in;
  const topology::Fabric& f;
  const topology::Embedding& emb;
  const FatTree& t;
  const LidTables& lft;
  std::vector<std::vector<int>> port_link;  // [node][physical port] model link, -1
  std::vector<int> owner;                   // [link] tenant index or kFreeClass
  std::vector<int> host_class;              // [host] tenant index, kFreeClass or kMgmtClass
  std::vector<char> mgmt_leaf;              // [leaf]
  std::vector<int> mgmt_switches;           // fabric nodes: SMs on switches above the leaves
  // Classes of hosts on each leaf. A host that is down keeps its class: the leaf's routes are
  // those of the intended tree and return unchanged with the host.
  std::vector<std::vector<int>> leaf_classes;

  std::string class_name(int cls) const;
  int minimal_hops(int src_leaf, int dst_leaf) const;
  int leaf_node(int leaf) const { return emb.switch_node[0][leaf]; }
  bool present(HostId h) const { return emb.host_node[h] >= 0; }
  int count_class_on_leaf(int leaf, int cls) const;
};

// The report being written: every finding counted, at most max_findings_per_kind kept.
class Findings {
 public:
  Findings(const AuditOptions& opt, AuditReport& report) : opt_(opt), rep_(report) {}
  void add(FindingKind kind, const std::string& tenant, const std::string& src,
           const std::string& dst, const std::string& detail);

 private:
  const AuditOptions& opt_;
  AuditReport& rep_;
};

}  // namespace laas::routing::auditing

// The audit's checks (audit.h), over its model (audit_model.h) with its traversers
// (audit_trace.h), writing findings to the report: audit_checks.cc (LID tables: unaccepted slots,
// servers, hosts, management, attached hosts), audit_sl2vl.cc (with SL2VL tables read back),
// audit_balance.cc (shift-permutation balance). Internal to routing/.
#pragma once

#include <string>
#include <vector>

#include "routing/audit_trace.h"
#include "routing/sl2vl.h"

namespace laas::routing::auditing {

class AuditChecks {
 public:
  AuditChecks(const AuditModel& model, const AuditOptions& opt, AuditReport& report);
  void run();

 private:
  // ---- LID tables (audit_checks.cc)
  void check_unaccepted();
  void check_servers();
  void check_hosts();
  void check_links(int cls, const std::vector<Hop>& hops, const std::string& tenant,
                   const std::string& src, const std::string& dst);
  void check_management();
  void check_attached();
  void check_unlisted_attached(const topology::AttachedHost& a, int at, topology::Lid lid);
  // ---- SL2VL tables (audit_sl2vl.cc)
  Sl2VlInput sl2vl_input() const;
  std::string port_text(int node, int port) const;
  void check_sl2vl_plan();
  std::string owner_text(int node, int port) const;
  void check_host_pairs();
  // check_host_pairs' tallies (figures) and the owner of each cable's own traffic.
  struct PairCounts {
    long pairs = 0, cross = 0, cross_dropped_first = 0, intra = 0, mgmt = 0;
    long to_free = 0, to_free_dropped_first = 0;  // non-management hosts to free hosts
    std::vector<int> cable_owner;                 // [link] kNoOwner until a pair crosses it
    std::vector<char> cable_bad;                  // [link] reported: two owners' traffic
    std::vector<Hop> hops;                        // the last pair's
  };
  void check_pairs_from(HostId s, const std::vector<HostId>& present, PairCounts& c);
  void check_pair(int leaf, int in, int x, const std::string& sname, HostId d, PairCounts& c);
  void note_shared_cables(int x, const std::string& sname, const std::string& dname, PairCounts& c);
  // ---- balance (audit_balance.cc)
  std::vector<int> shifts(int n, bool* sampled) const;
  void balance(int ti);

  // The model's, the traversers' and the report's, as the checks name them.
  std::string class_name(int cls) const { return m_.class_name(cls); }
  int minimal_hops(int src_leaf, int dst_leaf) const { return m_.minimal_hops(src_leaf, dst_leaf); }
  int leaf_node(int leaf) const { return m_.leaf_node(leaf); }
  bool present(HostId h) const { return m_.present(h); }
  int count_class_on_leaf(int leaf, int cls) const { return m_.count_class_on_leaf(leaf, cls); }
  void add(FindingKind kind, const std::string& tenant, const std::string& src,
           const std::string& dst, const std::string& detail) {
    findings_.add(kind, tenant, src, dst, detail);
  }
  Outcome trace(int node, topology::Lid lid, int target, std::vector<Hop>* hops) {
    return tracer_.trace(node, lid, target, hops);
  }
  PairTrace trace_sl(int node, int in, topology::Lid lid, int target, std::vector<Hop>* hops) {
    return tracer_.trace_sl(node, in, lid, target, hops);
  }
  FindingKind mgmt_unreached(int from_switch, int to_switch) const {
    return paths_.mgmt_unreached(from_switch, to_switch);
  }
  bool private_reaches(int ti, int src_leaf, HostId dst) {
    return private_.private_reaches(ti, src_leaf, dst);
  }
  int private_balance(int ti, const std::vector<HostId>& hosts, const std::vector<int>& list) {
    return private_.private_balance(ti, hosts, list);
  }

  const AuditModel& m_;
  const AuditInput& in_;
  const topology::Fabric& f_;
  const topology::Embedding& emb_;
  const FatTree& t_;
  const LidTables& lft_;
  const AuditOptions& opt_;
  AuditReport& rep_;
  const std::vector<std::vector<int>>& port_link_;
  const std::vector<int>& owner_;
  const std::vector<int>& host_class_;
  const std::vector<char>& mgmt_leaf_;
  const std::vector<int>& mgmt_switches_;
  const std::vector<std::vector<int>>& leaf_classes_;
  Findings findings_;
  Tracer tracer_;
  UpDownPaths paths_;
  PrivateRoutes private_;
  std::vector<int> load_;  // balance: flows per (node, port)
  static constexpr int kNoOwner = -100;
  std::vector<std::vector<PortOwner>> owners_;  // check_sl2vl_plan: the plan's port owners
};

}  // namespace laas::routing::auditing

// The audit's traversers: a packet followed through the fabric's LID tables (Tracer::trace)
// and SL2VL tables (trace_sl), up*/down* reachability over the links that are up
// (UpDownPaths), and a tenant routed alone on model tables (PrivateRoutes). Internal to
// routing/.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "routing/audit_model.h"

namespace laas::routing::auditing {

enum class Outcome { kDelivered, kNoRoute, kDeadEnd, kLoop, kTooLong, kWrongNode };
const char* outcome_text(Outcome o);

struct Hop {
  int node;  // fabric switch node
  int port;  // physical out-port
};

struct PairTrace {
  bool delivered = false;
  bool left_first_switch = false;  // forwarded by the first switch with some SL alive
  std::string where;               // where it stopped
};

// Counts every walk in the report (AuditReport::traces).
class Tracer {
 public:
  Tracer(const AuditModel& m, AuditReport& report)
      : in_(m.in), f_(m.f), lft_(m.lft), rep_(report) {}
  // Follows the tables from switch `node` towards `lid`, until `target` (a host: the last hop
  // leads to it; a switch: its entry is 0).
  Outcome trace(int node, topology::Lid lid, int target, std::vector<Hop>* hops);
  PairTrace trace_sl(int node, int in, topology::Lid lid, int target, std::vector<Hop>* hops);

 private:
  const AuditInput& in_;
  const topology::Fabric& f_;
  const LidTables& lft_;
  AuditReport& rep_;
};

class UpDownPaths {
 public:
  explicit UpDownPaths(const AuditModel& m) : in_(m.in), emb_(m.emb), t_(m.t) {}
  FindingKind mgmt_unreached(int from_switch, int to_switch) const;
  bool updown_path(int a, int b) const;

 private:
  std::set<std::pair<int, int>> upward(int level, int index) const;

  const AuditInput& in_;
  const topology::Embedding& emb_;
  const FatTree& t_;
};

class PrivateRoutes {
 public:
  explicit PrivateRoutes(const AuditModel& m) : in_(m.in), emb_(m.emb), t_(m.t) {}
  bool private_reaches(int ti, int src_leaf, HostId dst);
  int private_balance(int ti, const std::vector<HostId>& hosts, const std::vector<int>& list);

 private:
  RoutingRequest alone(int ti) const;
  const ModelTables& private_tables(int ti);
  void step(int* level, int* index, int port) const;

  const AuditInput& in_;
  const topology::Embedding& emb_;
  const FatTree& t_;
  std::map<int, ModelTables> private_;
};

}  // namespace laas::routing::auditing

// The audit's report: finding kinds, the counts and kept findings, and its JSON.
#include <nlohmann/json.hpp>

#include "routing/audit_model.h"

namespace laas::routing {

const char* to_string(FindingKind kind) {
  switch (kind) {
    case FindingKind::kTenantRouteEscapes:
      return "tenant-route-escapes";
    case FindingKind::kFreeRouteOnTenantLink:
      return "free-route-on-tenant-link";
    case FindingKind::kIntraTenantUnreachable:
      return "intra-tenant-unreachable";
    case FindingKind::kLoop:
      return "loop";
    case FindingKind::kOverlong:
      return "overlong";
    case FindingKind::kCrossRoute:
      return "cross-route";
    case FindingKind::kSharedLeaf:
      return "shared-leaf-needs-partition";
    case FindingKind::kManagementUnreachable:
      return "management-unreachable";
    case FindingKind::kFreeUnreachable:
      return "free-unreachable";
    case FindingKind::kBalanceWorseThanPrivate:
      return "balance-worse-than-private";
    case FindingKind::kCrossTenantSurvives:
      return "cross-tenant-survives-first-switch";
    case FindingKind::kSharedCable:
      return "cable-carries-two-owners";
    case FindingKind::kSl2VlMismatch:
      return "sl2vl-mismatch";
    case FindingKind::kExemption:
      return "management-exemption";
    case FindingKind::kFreeHostReachable:
      return "free-host-reachable";
    case FindingKind::kDegradedUnreachable:
      return "degraded-unreachable";
    case FindingKind::kManagementPartitioned:
      return "management-partitioned";
    case FindingKind::kServerSplit:
      return "server-split";
    case FindingKind::kUnacceptedHost:
      return "unaccepted-host";
    case FindingKind::kUnacceptedHostRouted:
      return "unaccepted-host-routed";
    case FindingKind::kAttachedUnreachable:
      return "attached-host-unreachable";
    case FindingKind::kAttachedCrossesTenant:
      return "attached-host-route-crosses-tenant";
    case FindingKind::kAttachedReplySharesLink:
      return "attached-host-reply-shares-link";
    case FindingKind::kUnlistedAttachedReachable:
      return "unlisted-attached-host-reachable";
  }
  return "unknown";
}

bool is_violation(FindingKind kind) {
  return kind != FindingKind::kSharedLeaf && kind != FindingKind::kFreeUnreachable &&
         kind != FindingKind::kExemption && kind != FindingKind::kDegradedUnreachable &&
         kind != FindingKind::kManagementPartitioned &&
         kind != FindingKind::kAttachedReplySharesLink;
}

long AuditReport::violations() const {
  long total = 0;
  for (const auto& [name, n] : counts) {
    bool violation = true;
    for (auto k : {FindingKind::kSharedLeaf, FindingKind::kFreeUnreachable, FindingKind::kExemption,
                   FindingKind::kDegradedUnreachable, FindingKind::kManagementPartitioned,
                   FindingKind::kAttachedReplySharesLink})
      if (name == to_string(k)) violation = false;
    if (violation) total += n;
  }
  return total;
}

long AuditReport::count(FindingKind kind) const {
  auto it = counts.find(to_string(kind));
  return it == counts.end() ? 0 : it->second;
}

nlohmann::json to_json(const AuditReport& report) {
  nlohmann::json j;
  j["ok"] = report.ok();
  j["violations"] = report.violations();
  j["traces"] = report.traces;
  j["counts"] = report.counts;
  // Its name of the release before, kept beside it for the readers that still look it up (the
  // total of violations counts it once).
  if (const auto n = report.count(FindingKind::kUnacceptedHostRouted))
    j["counts"]["quarantined-host-routed"] = n;
  auto& findings = j["findings"] = nlohmann::json::array();
  for (const auto& f : report.findings)
    findings.push_back({{"kind", to_string(f.kind)},
                        {"violation", is_violation(f.kind)},
                        {"tenant", f.tenant},
                        {"source", f.source},
                        {"destination", f.destination},
                        {"detail", f.detail}});
  if (!report.figures.empty()) j["figures"] = report.figures;
  if (!report.exemptions.empty()) j["exemptions"] = report.exemptions;
  auto& balance = j["balance"] = nlohmann::json::array();
  for (const auto& b : report.balance)
    balance.push_back({{"tenant", b.tenant},
                       {"hosts", b.hosts},
                       {"shifts", b.shifts},
                       {"sampled", b.sampled},
                       {"worst", b.worst},
                       {"private_worst", b.private_worst}});
  return j;
}

namespace auditing {

void Findings::add(FindingKind kind, const std::string& tenant, const std::string& src,
                   const std::string& dst, const std::string& detail) {
  long& n = rep_.counts[to_string(kind)];
  ++n;
  if (n <= opt_.max_findings_per_kind) rep_.findings.push_back({kind, tenant, src, dst, detail});
}

}  // namespace auditing
}  // namespace laas::routing

// laas-audit's audit: every relevant pair traced through the tables read back, the multicast
// tables if given; the report as text or JSON.
#include <cstdio>
#include <iostream>

#include "tools/audit_cli.h"

namespace laas::tools {

namespace {

std::string mlid_text(int mlid) {
  char text[8];
  std::snprintf(text, sizeof text, "0x%04x", mlid);
  return text;
}

void print_json(const AuditOptions& o, const AuditInputs& in, const routing::AuditReport& report,
                const routing::McastAuditReport& mreport, long violations) {
  auto j = routing::to_json(report);
  if (!o.mfts_path.empty()) {
    j["multicast"] = routing::to_json(mreport);
    j["ok"] = violations == 0;
  }
  const auto& emb = in.rec.embedding;
  j["topology"] = in.rec.tree->spec().text();
  j["missing_links"] = emb.missing_links.size();
  j["missing_hosts"] = emb.missing_hosts.size();
  j["missing_switches"] = emb.missing_switches.size();
  std::cout << j.dump(2) << "\n";
}

void print_unicast(const AuditInputs& in, const routing::AuditReport& report) {
  const auto& tree = *in.rec.tree;
  const auto& emb = in.rec.embedding;
  std::cout << "fabric: " << tree.spec().text() << ", " << tree.num_hosts() << " hosts, "
            << emb.missing_links.size() << " links, " << emb.missing_hosts.size() << " hosts and "
            << emb.missing_switches.size() << " switches down; " << in.input.tenants.size()
            << " tenants; " << report.traces << " paths traced\n";
  for (const auto& [kind, n] : report.counts) std::cout << "  " << kind << ": " << n << "\n";
  for (const auto& f : report.findings)
    std::cout << (routing::is_violation(f.kind) ? "VIOLATION " : "note ")
              << routing::to_string(f.kind) << (f.tenant.empty() ? "" : " [" + f.tenant + "]")
              << " " << f.source << " -> " << f.destination << ": " << f.detail << "\n";
  for (const auto& [name, n] : report.figures) std::cout << "  " << name << ": " << n << "\n";
  for (const auto& e : report.exemptions) std::cout << "exemption " << e << "\n";
  for (const auto& b : report.balance)
    std::cout << "balance " << b.tenant << ": " << b.hosts << " hosts, worst link load " << b.worst
              << " over " << b.shifts << (b.sampled ? " sampled" : "") << " shifts; private tree "
              << b.private_worst << "\n";
}

void print_multicast(const routing::McastAuditReport& mreport) {
  std::cout << "multicast: " << mreport.groups.size() << " groups\n";
  for (const auto& g : mreport.groups)
    std::cout << "  group " << mlid_text(g.mlid) << ": " << g.cls
              << (g.tenant.empty() ? "" : " " + g.tenant) << ", " << g.receivers << " receivers, "
              << g.switches << " switches, " << g.links << " links\n";
  for (const auto& [kind, n] : mreport.counts) std::cout << "  " << kind << ": " << n << "\n";
  for (const auto& f : mreport.findings)
    std::cout << (routing::is_violation(f.kind) ? "VIOLATION " : "note ")
              << routing::to_string(f.kind) << " " << mlid_text(f.mlid)
              << (f.tenant.empty() ? "" : " [" + f.tenant + "]") << " " << f.where << ": "
              << f.detail << "\n";
}

}  // namespace

int audit_and_report(const AuditOptions& o, const AuditInputs& in) {
  routing::AuditOptions options;
  options.max_findings_per_kind = o.max_findings;
  routing::AuditReport report;
  try {
    report = routing::audit(in.input, options);
  } catch (const std::exception& e) {
    throw BadInput(e.what());
  }
  routing::McastAuditReport mreport;
  if (!o.mfts_path.empty()) {
    try {
      mreport = routing::audit_multicast(in.input, in.mfts, nullptr, o.max_findings);
    } catch (const std::exception& e) {
      throw BadInput(e.what());
    }
  }
  const long violations = report.violations() + mreport.violations();
  if (o.as_json) {
    print_json(o, in, report, mreport, violations);
  } else {
    print_unicast(in, report);
    if (!o.mfts_path.empty()) print_multicast(mreport);
    std::cout << (violations == 0 ? "OK: no isolation violation\n"
                                  : "FAIL: " + std::to_string(violations) + " violations\n");
  }
  return violations == 0 ? 0 : 1;
}

}  // namespace laas::tools

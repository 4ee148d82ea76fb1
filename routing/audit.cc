// audit(): the model built from the input, then the checks in turn (audit_checks.h).
#include "routing/audit.h"

#include <memory>
#include <stdexcept>

#include "routing/audit_checks.h"

namespace laas::routing {

namespace {

void run_checks(const AuditInput& input, const AuditOptions& options, AuditReport& report) {
  const auditing::AuditModel model(input);
  auditing::AuditChecks checks(model, options, report);
  checks.run();
}

}  // namespace

AuditReport audit(const AuditInput& input, const AuditOptions& options) {
  if (!input.fabric || !input.embedding || !input.tree || !input.tables)
    throw std::invalid_argument("audit: fabric, embedding, tree and tables are required");
  AuditReport report;
  // Unaccepted slots are audited as absent hosts of their tenants.
  std::vector<HostId> hide;
  for (const auto& q : input.unaccepted)
    if (q.host >= 0 && q.host < static_cast<HostId>(input.embedding->host_node.size()) &&
        input.embedding->host_node[q.host] >= 0)
      hide.push_back(q.host);
  if (hide.empty()) {
    run_checks(input, options, report);
    return report;
  }
  AuditInput hidden = input;
  hidden.owned_embedding =
      std::make_shared<const topology::Embedding>(without_hosts(*input.embedding, hide));
  hidden.embedding = hidden.owned_embedding.get();
  run_checks(hidden, options, report);
  return report;
}

}  // namespace laas::routing

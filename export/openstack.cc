#include "export/openstack.h"

#include <set>

#include "export/names.h"

namespace laas::exports {

namespace {

constexpr const char* kFormat = "OpenStack";
constexpr const char* kHeader = "#!/bin/bash\nset -euo pipefail\n";

struct Names {
  std::string aggregate;
  std::string project;
  std::vector<std::string> hosts;
};

Names names(const TenantRecord& t, const OpenStackOptions& o) {
  const std::string subject = "tenant '" + t.name + "'";
  Names n;
  n.aggregate = o.aggregate_prefix + t.name;
  check_name(n.aggregate, kMaxOpenStackName, kFormat, subject,
             "aggregate name '" + n.aggregate + "'");
  n.project = mapped(o.projects, t.name);
  check_name(n.project, kMaxProjectId, kFormat, subject, "project ID '" + n.project + "'");
  for (const auto& h : t.hosts) {
    const std::string host = mapped(o.host_names, h.name);
    check_name(host, kMaxOpenStackName, kFormat, subject + " host '" + h.name + "'",
               host == h.name ? "host name" : "mapped host name '" + host + "'");
    n.hosts.push_back(host);
  }
  return n;
}

std::string q(const std::string& s) { return shell_quote(s); }

}  // namespace

std::string generate_openstack_add(const std::vector<TenantRecord>& tenants,
                                   const OpenStackOptions& options) {
  std::string out = std::string(kHeader) +
                    "# Host aggregates for LaaS tenants, generated. Needs the\n"
                    "# AggregateMultiTenancyIsolation scheduler filter.\n";
  std::set<std::string> seen;
  for (const auto& t : tenants) {
    if (!seen.insert(t.name).second)
      throw ExportError(kFormat, "tenant '" + t.name + "'", "listed twice");
    const auto n = names(t, options);
    out += "\n# tenant " + t.name + "\n";
    out += "openstack aggregate create " + q(n.aggregate) + "\n";
    out += "openstack aggregate set --property " + q("filter_tenant_id=" + n.project) + " " +
           q(n.aggregate) + "\n";
    for (const auto& h : n.hosts)
      out += "openstack aggregate add host " + q(n.aggregate) + " " + q(h) + "\n";
  }
  return out;
}

std::string generate_openstack_remove(const std::vector<TenantRecord>& tenants,
                                      const OpenStackOptions& options) {
  std::string out = std::string(kHeader) + "# Remove departing LaaS tenants' host aggregates.\n";
  for (const auto& t : tenants) {
    const auto n = names(t, options);
    out += "\n# tenant " + t.name + "\n";
    for (const auto& h : n.hosts)
      out += "openstack aggregate remove host " + q(n.aggregate) + " " + q(h) + "\n";
    out += "openstack aggregate delete " + q(n.aggregate) + "\n";
  }
  return out;
}

}  // namespace laas::exports

// tenants.yaml: a file-based client of the tenant service, beside the control socket. Tenants
// the file lists and the service does not hold are added; tenants the previous version of the
// file listed and this one does not are removed; tenants added through the socket are left
// alone. Fed by the routing run (Controller::route) when the file changed, so the run that reads
// it routes the change and asks for no other; the list last applied is kept next to
// state.json (tenants.yaml.applied, or with `state_store: etcd` the key PREFIX +
// "tenants_applied") so that tenants dropped while the SM was down are released at the next
// start, or by the SM that takes the state over.
#pragma once

#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/tenants.h"
#include "service/state_io.h"
#include "service/tenant_service.h"

namespace laas::core {

// tenants.yaml.applied's list (empty when absent or unreadable: nothing is removed on its word),
// from the file or from its text (the shared part `tenants_applied`).
std::set<std::string> load_applied(const std::string& path);
std::set<std::string> parse_applied(const std::string& text);

class TenantsFile {
 public:
  // `config` and `service` outlive this object (the Controller holds all three).
  TenantsFile(const Config& config, service::TenantService& service, service::Logger log);

  // Where the applied list lives: the state directory's tenants.yaml.applied, or in etcd.
  std::string applied_path() const { return service_.store().part_path("tenants_applied"); }
  // The list tenants.yaml.applied holds, read with the state directory's other files (at
  // start, and when this SM takes the state over).
  void adopt_applied(std::set<std::string> applied);
  // Whether the file differs from the version the last routing run looked at (false before
  // any run: `routed_once`).
  bool changed(bool routed_once) const;
  // Like changed(), but true only once per version of the file: whoever gets true asks for
  // the re-route.
  bool claim_change(bool routed_once);
  // Inside a routing run: when the file changed since the last run and can be trusted, the
  // service is given what it lists (one line in `info`; refusals and an ignored file in
  // `warnings`).
  void feed(std::vector<std::string>& info, std::vector<std::string>& warnings);

 private:
  using FileStamp = service::FileStamp;
  // The file's stamp, asked of the state directory's worker (nullopt: it does not answer).
  std::optional<FileStamp> stamp() const;
  std::optional<std::vector<TenantRequest>> read(std::vector<std::string>& warnings);
  std::string why_ignored(const std::string& error, bool exists, const std::string& suspicious);
  void release_dropped(const std::vector<TenantRequest>& requests,
                       std::vector<std::string>& warnings);
  void record_applied(const std::set<std::string>& applied);
  void add_listed(const std::vector<TenantRequest>& requests, std::vector<std::string>& warnings);

  const Config& config_;
  service::TenantService& service_;
  service::Logger log_;
  mutable std::mutex mu_;  // guards the fields below (the watcher asks while a run feeds)
  FileStamp seen_, fed_, claimed_;
  std::set<std::string> listed_;  // tenants the file listed last time it was read
};

}  // namespace laas::core

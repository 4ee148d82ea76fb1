#include "core/tenants_file.h"

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

#include "service/service_state.h"
#include "service/state_store.h"

namespace laas::core {
namespace {

using nlohmann::json;

// The tenants file acts with root's rights: it is as privileged as the state directory.
const service::Caller kFileCaller{0, true, true, /*routes_itself=*/true};

// Why a tenants file looks cut off ("" when it does not): empty, blank, or missing the final
// newline every editor and `laasctl`-style writer ends a file with.
std::string suspicious_tenants_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return "is empty";
  if (text.back() != '\n') return "does not end with a newline (cut off?)";
  return "";
}

}  // namespace

std::set<std::string> load_applied(const std::string& path) {
  bool exists = false;
  const std::string text = service::read_text(path, &exists);
  return exists ? parse_applied(text) : std::set<std::string>{};
}

std::set<std::string> parse_applied(const std::string& text) {
  std::set<std::string> names;
  try {
    const json doc = json::parse(text);
    for (const auto& n : doc.at("tenants")) names.insert(n.get<std::string>());
  } catch (const std::exception&) {
    // Unreadable: forget it, as before this file existed (nothing is removed on its word).
    names.clear();
  }
  return names;
}

TenantsFile::TenantsFile(const Config& config, service::TenantService& service, service::Logger log)
    : config_(config), service_(service), log_(std::move(log)) {}

void TenantsFile::adopt_applied(std::set<std::string> applied) {
  std::lock_guard<std::mutex> lock(mu_);
  listed_ = std::move(applied);
}

std::optional<service::FileStamp> TenantsFile::stamp() const {
  if (config_.state_dir_unknown) return std::nullopt;
  try {
    return service_.io().call([path = config_.tenants_file()] { return service::stamp_of(path); },
                              service::kIoDeadline);
  } catch (const service::NotAnsweringError&) {
    return std::nullopt;
  }
}

bool TenantsFile::changed(bool routed_once) const {
  const auto now = stamp();
  if (!now) return false;
  std::lock_guard<std::mutex> lock(mu_);
  return routed_once && !(*now == seen_);
}

bool TenantsFile::claim_change(bool routed_once) {
  const auto now = stamp();
  if (!now) return false;
  std::lock_guard<std::mutex> lock(mu_);
  if (!routed_once || *now == seen_ || *now == claimed_) return false;
  claimed_ = *now;
  return true;
}

void TenantsFile::feed(std::vector<std::string>& info, std::vector<std::string>& warnings) {
  const auto requests = read(warnings);
  if (!requests) return;
  info.push_back("read " + std::to_string(requests->size()) + " tenant(s) from " +
                 config_.tenants_file());
  release_dropped(*requests, warnings);
  add_listed(*requests, warnings);
}

// The file when it changed since the last run and can be trusted: read on the state
// directory's worker, and not at all while it does not answer (changes are refused then
// anyway; it is read at the first run it answers). An empty or cut-off file (an editor's crash,
// a full disk, a copy interrupted) must not read as "remove every tenant": that takes `[]`.
std::optional<std::vector<TenantRequest>> TenantsFile::read(std::vector<std::string>& warnings) {
  const auto now = stamp();
  if (!now) return std::nullopt;
  {
    std::lock_guard<std::mutex> lock(mu_);
    seen_ = *now;
    if (*now == fed_) return std::nullopt;
    fed_ = *now;
  }
  struct Read {
    std::vector<TenantRequest> requests;
    std::string error, suspicious;
    bool exists = true;
  };
  Read read;
  try {
    read = service_.io().call(
        [path = config_.tenants_file()] {
          Read r;
          try {
            r.requests = load_tenant_requests(path, &r.exists);
            r.suspicious = suspicious_tenants_file(path);
          } catch (const std::exception& e) {
            r.error = e.what();
          }
          return r;
        },
        service::kIoDeadline);
  } catch (const service::NotAnsweringError&) {
    std::lock_guard<std::mutex> lock(mu_);
    fed_ = FileStamp{};  // read again at the next run
    return std::nullopt;
  }
  const std::string ignored = why_ignored(read.error, read.exists, read.suspicious);
  service_.set_tenants_file_note(ignored);
  if (!ignored.empty()) {
    warnings.push_back(ignored);
    return std::nullopt;
  }
  return std::move(read.requests);
}

// Unreadable, gone (ENOENT on a share that lost it, a slip of rm) while it listed tenants,
// or cut off: no list at all, never "remove every tenant". "": the list can be used.
std::string TenantsFile::why_ignored(const std::string& error, bool exists,
                                     const std::string& suspicious) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string kept = "; the " + std::to_string(listed_.size()) +
                           " tenant(s) it listed are kept (write [] to remove them all)";
  if (!error.empty()) return "tenants file ignored: " + error + kept;
  if (!exists && !listed_.empty())
    return "tenants file ignored: " + config_.tenants_file() + " does not exist" + kept;
  if (!suspicious.empty() && !listed_.empty())
    return "tenants file ignored: " + config_.tenants_file() + " " + suspicious + kept;
  return "";
}

// Tenants the file listed last time and lists no more are removed; one that cannot be is
// still the file's and tried again at the next run. tenants.yaml.applied records the list.
void TenantsFile::release_dropped(const std::vector<TenantRequest>& requests,
                                  std::vector<std::string>& warnings) {
  std::set<std::string> listed;
  for (const auto& r : requests) listed.insert(r.name);
  std::set<std::string> previous;
  {
    std::lock_guard<std::mutex> lock(mu_);
    previous = listed_;
    listed_ = listed;
  }
  std::set<std::string> not_removed;
  for (const auto& name : previous) {
    if (listed.count(name)) continue;
    const auto r = service_.remove_tenant(name, kFileCaller);
    // Already gone (removed through the socket): nothing to release.
    if (!r.ok && r.code != service::error::kNotFound) {
      warnings.push_back("tenant " + name + " not removed: " + r.message +
                         "; tried again at the next routing run");
      not_removed.insert(name);
    }
  }
  if (!not_removed.empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    listed_.insert(not_removed.begin(), not_removed.end());
    fed_ = FileStamp{};
  }
  std::set<std::string> applied = listed;
  applied.insert(not_removed.begin(), not_removed.end());
  if (applied != previous) record_applied(applied);
}

// On the state directory's worker: the routing run never waits for it.
void TenantsFile::record_applied(const std::set<std::string>& applied) {
  service_.io().post("tenants.yaml.applied", [store = service_.store(), log = log_,
                                              text = json({{"tenants", applied}}).dump() + "\n"] {
    try {
      store.write_part("tenants_applied", text);
    } catch (const std::exception& e) {
      log(service::LogLevel::kError,
          std::string("laas: cannot record the applied tenants file: ") + e.what());
    }
  });
}

// Tenants the file lists that the service does not hold are placed (the service logs each).
void TenantsFile::add_listed(const std::vector<TenantRequest>& requests,
                             std::vector<std::string>& warnings) {
  const auto names = service_.tenant_names();
  const std::set<std::string> held(names.begin(), names.end());
  for (const auto& t : requests) {
    if (held.count(t.name)) continue;
    const auto r = service_.add_tenant(t.name, t.hosts, t.host_list, kFileCaller);
    if (!r.ok) warnings.push_back("tenant " + t.name + " refused: " + r.message);
  }
}

}  // namespace laas::core

#include "service/state_store.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "service/etcd_state.h"
#include "util/durable_file.h"
#include "util/guid.h"

namespace laas::service {
namespace {

constexpr const char* kFormat = "laas-state";
constexpr int kVersion = kStateVersion;

std::string errno_text() { return std::strerror(errno); }

}  // namespace

std::string guid_hex(topology::Guid guid) { return util::guid_hex(guid); }

topology::Guid parse_guid(const std::string& text) {
  if (auto guid = util::parse_guid(text)) return *guid;
  throw std::invalid_argument("'" + text + "' is not a GUID (" + util::kGuidGrammar + ")");
}

void stage_file(const std::string& path, const std::string& text, unsigned mode) {
  const std::string staged = util::stage_durably(path, text, mode);
  // Under the one name the later publish knows; synced with the directory by that publish.
  if (::rename(staged.c_str(), (path + ".tmp").c_str()) != 0) {
    const std::string why = errno_text();
    ::unlink(staged.c_str());
    throw std::runtime_error("cannot stage " + path + ".tmp: " + why);
  }
}

void discard_staged_file(const std::string& path) { ::unlink((path + ".tmp").c_str()); }

void publish_staged_file(const std::string& path) { util::publish_durably(path + ".tmp", path); }

StateStore::StateStore(std::string directory, std::shared_ptr<EtcdState> etcd)
    : directory_(std::move(directory)),
      path_(etcd ? etcd->where() : directory_ + "/state.json"),
      lock_path_(directory_ + "/state.lock"),
      etcd_(std::move(etcd)) {}

FileStamp StateStore::stamp() const { return etcd_ ? etcd_->stamp() : stamp_of(path_); }

std::string StateStore::unavailable() const { return etcd_ ? etcd_->unavailable() : ""; }

namespace {

PersistedLink link_from(const nlohmann::json& l) {
  return {parse_guid(l.at("switch").get<std::string>()), l.at("port").get<int>()};
}

nlohmann::json link_to(const PersistedLink& l) {
  return {{"switch", guid_hex(l.switch_guid)}, {"port", l.port}};
}

// state.json holds integers only. A number with a fraction or an exponent (1e113) converted to
// an int is undefined behaviour, so such a document is refused whole: the first one found, or
// an empty string. Iterative: a deeply nested document must not exhaust the stack.
std::string first_non_integer(const nlohmann::json& doc) {
  std::vector<const nlohmann::json*> pending{&doc};
  while (!pending.empty()) {
    const nlohmann::json* j = pending.back();
    pending.pop_back();
    if (j->is_number_float()) return j->dump();
    if (j->is_structured())
      for (const auto& child : *j) pending.push_back(&child);
  }
  return "";
}

}  // namespace

namespace {

// Why a state file is not trusted; parse_state says which file, and what follows.
struct Untrusted : std::runtime_error {
  using std::runtime_error::runtime_error;
};
[[noreturn]] void untrusted(const std::string& why) { throw Untrusted(why); }

nlohmann::json parse_document(const std::string& text) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for 1e999
    untrusted(std::string("invalid JSON (") + e.what() + ")");
  }
  if (const std::string number = first_non_integer(doc); !number.empty())
    untrusted("the number " + number + " is not an integer (every number in it is)");
  return doc;
}

std::vector<topology::Guid> guid_list(const nlohmann::json& doc, const char* key) {
  std::vector<topology::Guid> out;
  for (const auto& g : doc.value(key, nlohmann::json::array()))
    out.push_back(parse_guid(g.get<std::string>()));
  return out;
}

// Everything but the tenants and the drains: format, version, term and the members lists.
void parse_header(const nlohmann::json& doc, PersistedState& state) {
  if (!doc.is_object() || doc.value("format", "") != kFormat)
    untrusted("'format' is not \"laas-state\"");
  const int version = doc.value("version", 0);
  if (version != 1 && version != kVersion)
    untrusted("'version' is " + doc.value("version", nlohmann::json()).dump() +
              ", expected 1 or 2");
  state.loaded_version = version;
  state.topology = doc.at("topology").get<std::string>();
  state.generation = doc.at("generation").get<std::uint64_t>();
  state.term = doc.value("term", std::uint64_t{0});
  state.master = doc.value("master", "");
  state.sm_ports = guid_list(doc, "sm_ports");
  state.management = guid_list(doc, "management");
  state.outside_members = guid_list(doc, "outside_members");
  state.free_pool_members = guid_list(doc, "free_pool_members");
  for (const auto& n : doc.value("unrouted_tenants", nlohmann::json::array()))
    state.unrouted_tenants.push_back(n.get<std::string>());
}

// What no two tenants may hold, across the whole file.
struct HeldOnce {
  std::set<std::string> names;
  std::set<topology::Guid> guids;
  std::set<std::pair<topology::Guid, int>> slots;
  std::set<PersistedLink> links;

  void take_link(const PersistedLink& l, const std::string& tenant) {
    if (!links.insert(l).second)
      untrusted("link " + guid_hex(l.switch_guid) + " port " + std::to_string(l.port) +
                " is held twice (tenant '" + tenant + "')");
  }
};

// Version 1 records a host by its port GUID; version 2 by its slot (leaf and port).
PersistedHost parse_host(const nlohmann::json& h, int version, const std::string& tenant,
                         HeldOnce& held) {
  PersistedHost host;
  if (version == 1) {
    host.guid = parse_guid(h.get<std::string>());
    // Located by this GUID at the next recognition: 0 could never be, nor saved again.
    if (host.guid == 0) untrusted("tenant '" + tenant + "': host GUID 0");
  } else {
    host.leaf_guid = parse_guid(h.at("leaf").get<std::string>());
    host.port = h.at("port").get<int>();
    host.guid = h.contains("guid") ? parse_guid(h.at("guid").get<std::string>()) : 0;
    host.name = h.value("name", "");
    // leaf 0: a version-1 host not located yet (it was absent); found by its GUID.
    if (host.leaf_guid == 0 ? host.guid == 0 : host.port <= 0 || host.port > 254)
      untrusted("tenant '" + tenant + "': host slot " + guid_hex(host.leaf_guid) + " port " +
                std::to_string(host.port));
    if (host.leaf_guid && !held.slots.insert({host.leaf_guid, host.port}).second)
      untrusted("host " + guid_hex(host.leaf_guid) + " port " + std::to_string(host.port) +
                " is held by two tenants");
  }
  if (host.guid && !held.guids.insert(host.guid).second)
    untrusted("host " + guid_hex(host.guid) + " is held by two tenants");
  return host;
}

void parse_tenant_links(const nlohmann::json& t, PersistedTenant& p, HeldOnce& held) {
  for (const auto& l : t.at("links")) {
    p.links.push_back(link_from(l));
    held.take_link(p.links.back(), p.name);
  }
  if (!t.contains("repairs")) return;
  for (const auto& r : t.at("repairs")) {
    PersistedRepair repair;
    for (const auto& l : r.at("retired")) repair.retired.push_back(link_from(l));
    for (const auto& l : r.at("added")) {
      repair.added.push_back(link_from(l));
      held.take_link(repair.added.back(), p.name);
    }
    if (repair.retired.empty() || repair.retired.size() != repair.added.size())
      untrusted("tenant '" + p.name + "' has a repair that does not pair retired and added links");
    p.repairs.push_back(std::move(repair));
  }
}

PersistedTenant parse_tenant(const nlohmann::json& t, int version, HeldOnce& held) {
  PersistedTenant p;
  p.name = t.at("name").get<std::string>();
  if (!held.names.insert(p.name).second) untrusted("tenant '" + p.name + "' appears twice");
  p.requested = t.at("requested").get<int>();
  p.shape = t.value("shape", "");
  if (t.contains("shape_numbers")) {
    p.shape_numbers = t.at("shape_numbers").get<std::vector<int>>();
    if (p.shape_numbers.size() != 6) untrusted("tenant '" + p.name + "': shape_numbers needs 6");
  }
  const int pkey = t.value("pkey", 0);
  if (pkey < 0 || pkey >= 0x7fff)
    untrusted("tenant '" + p.name + "' has P_Key " + std::to_string(pkey));
  p.pkey = static_cast<std::uint16_t>(pkey);
  p.slurm_accounts = t.value("slurm_accounts", std::vector<std::string>{});
  p.slurm_users = t.value("slurm_users", std::vector<std::string>{});
  p.openstack_project = t.value("openstack_project", "");
  for (const auto& h : t.at("hosts")) p.hosts.push_back(parse_host(h, version, p.name, held));
  parse_tenant_links(t, p, held);
  if (p.requested <= 0 || p.hosts.empty()) untrusted("tenant '" + p.name + "' holds no hosts");
  return p;
}

// Hosts an administrator took out of service.
void parse_drained_hosts(const nlohmann::json& doc, PersistedState& state) {
  if (!doc.contains("drained")) return;
  std::set<topology::Guid> drained;
  for (const auto& d : doc.at("drained")) {
    PersistedDrain one;
    one.guid = parse_guid(d.at("guid").get<std::string>());
    if (one.guid == 0) untrusted("a drained host has port GUID 0");
    if (!drained.insert(one.guid).second)
      untrusted("host " + guid_hex(one.guid) + " is drained twice");
    one.reason = d.at("reason").get<std::string>();
    one.name = d.value("name", "");
    one.by = d.value("by", "");
    one.at = d.value("at", "");
    state.drained.push_back(std::move(one));
  }
}

}  // namespace

PersistedState parse_state(const std::string& text, const std::string& where) {
  PersistedState state;
  try {
    const nlohmann::json doc = parse_document(text);
    try {
      parse_header(doc, state);
      HeldOnce held;
      for (const auto& t : doc.at("tenants"))
        state.tenants.push_back(parse_tenant(t, state.loaded_version, held));
      parse_drained_hosts(doc, state);
      parse_fabric_drains(doc, state);
    } catch (const nlohmann::json::exception& e) {
      untrusted(std::string("missing or mistyped field (") + e.what() + ")");
    } catch (const std::invalid_argument& e) {
      untrusted(e.what());
    }
  } catch (const Untrusted& e) {
    throw std::runtime_error("state file " + where + " is not trusted: " + e.what() +
                             "; tenants are not routed until it is repaired or removed");
  }
  return state;
}

std::string serialize_state(const PersistedState& state) {
  nlohmann::json doc = {{"format", kFormat},
                        {"version", kVersion},
                        {"topology", state.topology},
                        {"generation", state.generation},
                        {"tenants", nlohmann::json::array()}};
  // Written only by SMs that took the state over: a single SM's file stays as before.
  if (state.term) doc["term"] = state.term;
  if (!state.master.empty()) doc["master"] = state.master;
  auto guids = [](const std::vector<topology::Guid>& list) {
    nlohmann::json out = nlohmann::json::array();
    for (auto g : list) out.push_back(guid_hex(g));
    return out;
  };
  if (!state.sm_ports.empty()) doc["sm_ports"] = guids(state.sm_ports);
  if (!state.management.empty()) doc["management"] = guids(state.management);
  if (!state.outside_members.empty()) doc["outside_members"] = guids(state.outside_members);
  if (!state.free_pool_members.empty()) doc["free_pool_members"] = guids(state.free_pool_members);
  if (!state.unrouted_tenants.empty()) doc["unrouted_tenants"] = state.unrouted_tenants;
  for (const auto& t : state.tenants) {
    nlohmann::json tenant = {
        {"name", t.name}, {"requested", t.requested},         {"shape", t.shape},
        {"pkey", t.pkey}, {"hosts", nlohmann::json::array()}, {"links", nlohmann::json::array()}};
    // Optional fields, written only when given: older readers see the same document.
    if (!t.slurm_accounts.empty()) tenant["slurm_accounts"] = t.slurm_accounts;
    if (!t.slurm_users.empty()) tenant["slurm_users"] = t.slurm_users;
    if (!t.openstack_project.empty()) tenant["openstack_project"] = t.openstack_project;
    for (const auto& h : t.hosts) {
      nlohmann::json host = {{"leaf", guid_hex(h.leaf_guid)}, {"port", h.port}};
      if (h.guid) host["guid"] = guid_hex(h.guid);
      if (!h.name.empty()) host["name"] = h.name;
      tenant["hosts"].push_back(std::move(host));
    }
    for (const auto& l : t.links) tenant["links"].push_back(link_to(l));
    if (!t.shape_numbers.empty()) tenant["shape_numbers"] = t.shape_numbers;
    if (!t.repairs.empty()) {
      auto& repairs = tenant["repairs"] = nlohmann::json::array();
      for (const auto& r : t.repairs) {
        nlohmann::json one = {{"retired", nlohmann::json::array()},
                              {"added", nlohmann::json::array()}};
        for (const auto& l : r.retired) one["retired"].push_back(link_to(l));
        for (const auto& l : r.added) one["added"].push_back(link_to(l));
        repairs.push_back(std::move(one));
      }
    }
    doc["tenants"].push_back(std::move(tenant));
  }
  if (!state.drained.empty()) {
    auto& drained = doc["drained"] = nlohmann::json::array();
    for (const auto& d : state.drained)
      drained.push_back({{"guid", guid_hex(d.guid)},
                         {"name", d.name},
                         {"reason", d.reason},
                         {"by", d.by},
                         {"at", d.at}});
  }
  write_fabric_drains(state, doc);
  return doc.dump(1) + "\n";
}

PersistedState StateStore::load() const {
  if (etcd_) {
    const EtcdState::Doc doc = etcd_->read();
    return doc.exists ? parse_state(doc.text, path_) : PersistedState{};
  }
  std::ifstream in(path_);
  if (!in) {
    if (errno == ENOENT) return PersistedState{};
    throw std::runtime_error("cannot read " + path_ + ": " + errno_text());
  }
  std::stringstream buf;
  buf << in.rdbuf();
  return parse_state(buf.str(), path_);
}

namespace {

// An exclusive lock on the state directory's lock file for one read-check-write. flock is
// carried over NFS as a whole-file lock (Linux >= 2.6.12) and is local on DRBD's one mounted
// side. A holder that dies releases it; one that hangs is waited for 10 s, then the write fails.
class DirectoryLock {
 public:
  explicit DirectoryLock(const std::string& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, kFileMode);
    if (fd_ < 0) throw std::runtime_error("cannot open " + path + ": " + errno_text());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if ((errno != EWOULDBLOCK && errno != EINTR) || std::chrono::steady_clock::now() > deadline) {
        const std::string why =
            errno == EWOULDBLOCK ? "held by another writer for 10 s" : errno_text();
        ::close(fd_);
        throw std::runtime_error("cannot lock " + path + ": " + why);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  ~DirectoryLock() { ::close(fd_); }  // closing the last descriptor releases the lock
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int fd_ = -1;
};

void make_directory(const std::string& directory) {
  if (::mkdir(directory.c_str(), kDirMode) != 0 && errno != EEXIST)
    throw std::runtime_error("cannot create " + directory + ": " + errno_text());
}

}  // namespace

FileStamp stamp_of(const std::string& path) {
  FileStamp s;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return s;
  s.exists = true;
  s.mtime_ns = static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
  s.size = st.st_size;
  s.inode = st.st_ino;
  return s;
}

FileStamp StateStore::save(const PersistedState& state) const {
  const std::string text = serialize_state(state);
  // Fenced by etcd itself: the transaction compares the leader key (FencedError when another
  // SM took the state over since this one did).
  if (etcd_) return etcd_->write(text);
  make_directory(directory_);
  DirectoryLock lock(lock_path_);
  const PersistedState disk = load();
  if (disk.term > state.term)
    throw FencedError(path_ + " belongs to a newer master: term " + std::to_string(disk.term) +
                      (disk.master.empty() ? "" : " (SM " + disk.master + ")") +
                      " took the state over after this SM's term " + std::to_string(state.term) +
                      "; nothing was written");
  if (disk.term == state.term && disk.generation > state.generation)
    throw FencedError(path_ + " holds generation " + std::to_string(disk.generation) +
                      ", newer than this SM's " + std::to_string(state.generation) +
                      " (another writer of term " + std::to_string(disk.term) +
                      "); nothing was written");
  write_file_atomically(path_, text, kFileMode);  // NotDurableError: in place, the caller says so
  return stamp_of(path_);
}

namespace {

// The state an SM taking over writes: the term raised, itself its master and among sm_ports.
void raise_term(PersistedState& state, const std::string& master, topology::Guid sm_port) {
  ++state.term;
  state.master = master;
  if (sm_port &&
      std::find(state.sm_ports.begin(), state.sm_ports.end(), sm_port) == state.sm_ports.end()) {
    state.sm_ports.push_back(sm_port);
    std::sort(state.sm_ports.begin(), state.sm_ports.end());
  }
}

}  // namespace

PersistedState StateStore::take_over(const std::string& master, topology::Guid sm_port,
                                     FileStamp* written, const std::string& missing_refusal) const {
  if (etcd_) {
    PersistedState state;
    const EtcdState::Doc doc =
        etcd_->take_over(master, [&](const std::optional<std::string>& text) {
          if (!text && !missing_refusal.empty()) throw std::runtime_error(missing_refusal);
          state = text ? parse_state(*text, path_) : PersistedState{};
          raise_term(state, master, sm_port);
          return serialize_state(state);
        });
    if (written)
      *written = FileStamp{true, 0, static_cast<long long>(doc.text.size()), 0,
                           static_cast<long long>(doc.revision)};
    state.loaded_version = kStateVersion;
    return state;
  }
  make_directory(directory_);
  DirectoryLock lock(lock_path_);
  if (!missing_refusal.empty() && !stamp_of(path_).exists)
    throw std::runtime_error(missing_refusal);
  PersistedState state = load();
  raise_term(state, master, sm_port);
  try {
    write_file_atomically(path_, serialize_state(state), kFileMode);
  } catch (const NotDurableError&) {
    // In place, not synced: the term stands for every reader; a crash may bring back the old.
  }
  if (written) *written = stamp_of(path_);
  state.loaded_version = kStateVersion;
  return state;
}

std::string StateStore::init(const std::string& group) const {
  if (etcd_) {
    if (read_parts().count("allocations"))
      throw std::runtime_error(part_path("allocations") +
                               " records tenants routed from this etcd: " + path_ +
                               " is lost, not new -- restore it from a backup (docs/ha.md); "
                               "nothing was written");
    if (!etcd_->create(serialize_state(PersistedState{})))
      throw std::runtime_error(path_ + " exists: the state is there already; nothing was written");
    return "wrote " + path_ +
           " (an empty tenant state, term 0): an SM becoming master takes it over";
  }
  std::optional<gid_t> gid;
  if (!group.empty())
    if (const struct group* g = ::getgrnam(group.c_str())) gid = g->gr_gid;
  std::string created;
  struct stat st;
  if (::stat(directory_.c_str(), &st) != 0) {
    if (errno != ENOENT)
      throw std::runtime_error("cannot stat " + directory_ + ": " + errno_text());
    make_directory(directory_);
    // Setgid: the files the plugin writes inside are the directory's group, readable by it.
    if (::chmod(directory_.c_str(), kDirMode | S_ISGID) != 0 ||
        (gid && ::chown(directory_.c_str(), static_cast<uid_t>(-1), *gid) != 0))
      throw std::runtime_error("cannot set the mode or group of " + directory_ + ": " +
                               errno_text());
    created = "created " + directory_ + "; ";
  } else if (!S_ISDIR(st.st_mode)) {
    throw std::runtime_error(directory_ + " is not a directory");
  }
  DirectoryLock lock(lock_path_);
  if (stamp_of(path_).exists)
    throw std::runtime_error(path_ + " exists: the state is there already; nothing was written");
  for (const char* lost : {"allocations.json", "tables.bin"})
    if (stamp_of(directory_ + "/" + lost).exists)
      throw std::runtime_error(directory_ + "/" + lost +
                               " records tenants routed from this directory: state.json is lost, "
                               "not new -- restore it from a backup (docs/ha.md); nothing was "
                               "written");
  write_file_atomically(path_, serialize_state(PersistedState{}), kFileMode);
  if (::stat(directory_.c_str(), &st) == 0)
    if (::chown(path_.c_str(), static_cast<uid_t>(-1), st.st_gid) != 0) {
      // Root's group then: the plugin (root) reads it either way.
    }
  return created + "wrote " + path_ + " (an empty tenant state, term 0): an SM becoming master " +
         "takes it over";
}

void StateStore::create(const PersistedState& state, const SharedParts& parts) const {
  const std::string text = serialize_state(state);
  std::vector<std::string> stale;
  for (const auto& part : kSharedParts)
    if (!parts.count(part.name)) stale.push_back(part.name);
  if (etcd_) {
    if (!etcd_->create(text, parts, stale))
      throw std::runtime_error(path_ + " exists: nothing was written");
    return;
  }
  make_directory(directory_);
  DirectoryLock lock(lock_path_);
  if (stamp_of(path_).exists) throw std::runtime_error(path_ + " exists: nothing was written");
  // The parts first, state.json last: interrupted, the directory holds no state and the
  // migration is made again.
  for (const auto& [name, part] : parts) write_file_atomically(part_path(name), part, kFileMode);
  for (const auto& name : stale)
    if (::unlink(part_path(name).c_str()) != 0 && errno != ENOENT)
      throw std::runtime_error("cannot remove " + part_path(name) + ": " + errno_text());
  write_file_atomically(path_, text, kFileMode);
}

std::string StateStore::part_path(const std::string& name) const {
  for (const auto& part : kSharedParts)
    if (name == part.name)
      return etcd_ ? "etcd:" + etcd_->part_key(name) : directory_ + "/" + part.file;
  throw std::invalid_argument("no shared part named '" + name + "'");
}

SharedParts StateStore::read_parts(bool or_followed) const {
  SharedParts out;
  if (etcd_) {
    std::vector<std::string> names;
    for (const auto& part : kSharedParts) names.push_back(part.name);
    for (auto& [name, doc] : etcd_->read_parts(names, or_followed))
      if (doc.exists) out[name] = std::move(doc.text);
    return out;
  }
  for (const auto& part : kSharedParts) {
    const std::string path = part_path(part.name);
    std::ifstream in(path);
    if (!in) {
      if (errno == ENOENT) continue;
      throw std::runtime_error("cannot read " + path + ": " + errno_text());
    }
    std::stringstream text;
    text << in.rdbuf();
    out[part.name] = text.str();
  }
  return out;
}

void StateStore::write_part(const std::string& name, const std::string& text) const {
  const std::string path = part_path(name);  // refuses an unknown name
  if (etcd_) return etcd_->write_part(name, text);
  make_directory(directory_);
  write_file_atomically(path, text, kFileMode);
}

namespace {

std::string part_names(const SharedParts& parts) {
  std::string out;
  for (const auto& [name, text] : parts) out += (out.empty() ? "" : ", ") + name;
  return out.empty() ? "none" : out;
}

}  // namespace

std::string migrate_state(const StateStore& from, const StateStore& to) {
  if (!from.stamp().exists)
    throw std::runtime_error(from.path() + " holds no state: nothing to migrate");
  const PersistedState state = from.load();  // refused when it cannot be trusted
  const SharedParts parts = from.read_parts();
  const std::string what = std::to_string(state.tenants.size()) + " tenant(s), term " +
                           std::to_string(state.term) + ", generation " +
                           std::to_string(state.generation);
  const std::string with = " (with the shared parts: " + part_names(parts) + ")";
  if (to.stamp().exists) {
    PersistedState there = to.load();
    there.loaded_version = state.loaded_version;
    if (there == state && to.read_parts() == parts)
      return to.path() + " holds the same state already (" + what + ")" + with;
    throw std::runtime_error(
        to.path() + " holds another state (term " + std::to_string(there.term) + ", generation " +
        std::to_string(there.generation) + ", " + std::to_string(there.tenants.size()) +
        " tenant(s)" + (there == state ? ", other shared parts" : "") +
        "): nothing was written; move it away first if it is stale");
  }
  to.create(state, parts);
  return "copied " + what + " from " + from.path() + " to " + to.path() + with;
}

std::string read_text(const std::string& path, bool* exists) {
  std::ifstream in(path);
  if (exists) *exists = static_cast<bool>(in);
  std::stringstream text;
  if (in) text << in.rdbuf();
  return text.str();
}

}  // namespace laas::service

#include "service/state_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

namespace laas::service {
namespace {

constexpr const char* kFormat = "laas-state";
constexpr int kVersion = 1;

std::string errno_text() { return std::strerror(errno); }

void write_all(int fd, const std::string& data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error("cannot write " + path + ": " + errno_text());
    }
    done += static_cast<size_t>(n);
  }
}

std::atomic<FsyncFn> fsync_hook{nullptr};

int sync_fd(int fd, bool directory) {
  const FsyncFn hook = fsync_hook.load();
  return hook ? hook(fd, directory) : ::fsync(fd);
}

}  // namespace

void set_fsync_for_tests(FsyncFn fn) { fsync_hook = fn; }

std::string guid_hex(topology::Guid guid) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(guid));
  return buf;
}

topology::Guid parse_guid(const std::string& text) {
  std::string digits = text;
  if (digits.rfind("0x", 0) == 0 || digits.rfind("0X", 0) == 0) digits = digits.substr(2);
  if (digits.empty() || digits.size() > 16 ||
      digits.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos)
    throw std::invalid_argument("'" + text + "' is not a GUID (up to 16 hex digits)");
  return std::stoull(digits, nullptr, 16);
}

void write_file_atomically(const std::string& path, const std::string& text, unsigned mode) {
  const auto slash = path.rfind('/');
  const std::string directory = slash == std::string::npos ? "." : path.substr(0, slash);
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) throw std::runtime_error("cannot create " + tmp + ": " + errno_text());
  try {
    write_all(fd, text, tmp);
    if (sync_fd(fd, false) != 0)
      throw std::runtime_error("cannot fsync " + tmp + ": " + errno_text());
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = errno_text();
    ::unlink(tmp.c_str());
    throw std::runtime_error("cannot replace " + path + ": " + why);
  }
  // The rename is durable only once the directory entry is on disk.
  // From here on the new content is what readers see: failures say so (NotDurableError).
  const int dir = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0)
    throw NotDurableError(path + " was replaced but " + directory +
                          " could not be opened to sync it: " + errno_text());
  const int rc = sync_fd(dir, true);
  const std::string why = errno_text();
  ::close(dir);
  if (rc != 0)
    throw NotDurableError(path + " was replaced but " + directory + " could not be synced: " + why);
}

StateStore::StateStore(std::string directory)
    : directory_(std::move(directory)), path_(directory_ + "/state.json") {}

PersistedState StateStore::load() const {
  PersistedState state;
  std::ifstream in(path_);
  if (!in) {
    if (errno == ENOENT) return state;
    throw std::runtime_error("cannot read " + path_ + ": " + errno_text());
  }
  std::stringstream buf;
  buf << in.rdbuf();
  auto fail = [&](const std::string& why) {
    throw std::runtime_error("state file " + path_ + " is not trusted: " + why +
                             "; tenants are not routed until it is repaired or removed");
  };
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(buf.str());
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for 1e999
    fail(std::string("invalid JSON (") + e.what() + ")");
  }
  try {
    if (doc.value("format", "") != kFormat) fail("'format' is not \"laas-state\"");
    if (doc.value("version", 0) != kVersion)
      fail("'version' is " + doc.value("version", nlohmann::json()).dump() + ", expected 1");
    state.topology = doc.at("topology").get<std::string>();
    state.generation = doc.at("generation").get<std::uint64_t>();
    std::set<std::string> names;
    std::set<topology::Guid> hosts_seen;
    for (const auto& t : doc.at("tenants")) {
      PersistedTenant p;
      p.name = t.at("name").get<std::string>();
      if (!names.insert(p.name).second) fail("tenant '" + p.name + "' appears twice");
      p.requested = t.at("requested").get<int>();
      p.shape = t.value("shape", "");
      const int pkey = t.value("pkey", 0);
      if (pkey < 0 || pkey >= 0x7fff)
        fail("tenant '" + p.name + "' has P_Key " + std::to_string(pkey));
      p.pkey = static_cast<std::uint16_t>(pkey);
      for (const auto& h : t.at("hosts")) {
        p.hosts.push_back(parse_guid(h.get<std::string>()));
        if (!hosts_seen.insert(p.hosts.back()).second)
          fail("host " + h.get<std::string>() + " is held by two tenants");
      }
      for (const auto& l : t.at("links"))
        p.links.push_back({parse_guid(l.at("switch").get<std::string>()), l.at("port").get<int>()});
      if (p.requested <= 0 || p.hosts.empty()) fail("tenant '" + p.name + "' holds no hosts");
      state.tenants.push_back(std::move(p));
    }
  } catch (const nlohmann::json::exception& e) {
    fail(std::string("missing or mistyped field (") + e.what() + ")");
  } catch (const std::invalid_argument& e) {
    fail(e.what());
  }
  return state;
}

void StateStore::save(const PersistedState& state) const {
  nlohmann::json doc = {{"format", kFormat},
                        {"version", kVersion},
                        {"topology", state.topology},
                        {"generation", state.generation},
                        {"tenants", nlohmann::json::array()}};
  for (const auto& t : state.tenants) {
    nlohmann::json tenant = {
        {"name", t.name}, {"requested", t.requested},         {"shape", t.shape},
        {"pkey", t.pkey}, {"hosts", nlohmann::json::array()}, {"links", nlohmann::json::array()}};
    for (auto h : t.hosts) tenant["hosts"].push_back(guid_hex(h));
    for (const auto& l : t.links)
      tenant["links"].push_back({{"switch", guid_hex(l.switch_guid)}, {"port", l.port}});
    doc["tenants"].push_back(std::move(tenant));
  }
  const std::string text = doc.dump(1) + "\n";
  if (::mkdir(directory_.c_str(), 0750) != 0 && errno != EEXIST)
    throw std::runtime_error("cannot create " + directory_ + ": " + errno_text());
  write_file_atomically(path_, text, 0640);
}

}  // namespace laas::service

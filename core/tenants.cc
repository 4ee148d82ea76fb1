#include "core/tenants.h"

#include <fcntl.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "core/config.h"
#include "util/text.h"

namespace laas::core {

using json = nlohmann::json;

std::vector<TenantRequest> load_tenant_requests(const std::string& path, bool* exists) {
  std::vector<TenantRequest> out;
  // Anything but ENOENT that keeps the file from being read -- EACCES, EIO, ESTALE on NFS, a
  // directory in its place -- throws: an unreadable file is no list at all, never an empty one.
  std::string text;
  const int error = util::read_whole_file(path, &text);
  if (exists) *exists = error != ENOENT;
  if (error == ENOENT) return out;
  if (error != 0) throw std::runtime_error(path + ": cannot be read: " + std::strerror(error));
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
  if (root.IsNull()) return out;
  if (!root.IsSequence()) throw std::runtime_error(path + ": expected a list of tenants");
  std::set<std::string> seen;
  int i = 0;
  for (const auto& t : root) {
    ++i;
    const std::string where = path + ": tenant #" + std::to_string(i);
    try {
      if (!t.IsMap()) throw std::runtime_error(where + ": expected {name, hosts}");
      TenantRequest r;
      if (!t["name"]) throw std::runtime_error(where + ": no name");
      r.name = t["name"].as<std::string>();
      if (!t["hosts"]) throw std::runtime_error(where + " (" + r.name + "): no hosts");
      if (t["hosts"].IsSequence()) {
        for (const auto& h : t["hosts"]) r.host_list.push_back(h.as<std::string>());
        if (r.host_list.empty()) throw std::runtime_error(where + " (" + r.name + "): no hosts");
      } else {
        r.hosts = t["hosts"].as<int>();
        if (r.hosts <= 0)
          throw std::runtime_error(where + " (" + r.name + "): hosts must be at least 1");
      }
      for (const auto& kv : t) {
        const auto key = kv.first.as<std::string>();
        if (key != "name" && key != "hosts")
          throw std::runtime_error(where + " (" + r.name + "): unknown key '" + key + "'");
      }
      if (!r.name.empty() && r.name[0] == '_')
        throw std::runtime_error(where + ": names starting with '_' are reserved");
      if (!seen.insert(r.name).second)
        throw std::runtime_error(where + ": tenant '" + r.name + "' is listed twice");
      out.push_back(r);
    } catch (const YAML::Exception& e) {
      throw std::runtime_error(where + ": " + e.what());
    }
  }
  return out;
}

}  // namespace laas::core

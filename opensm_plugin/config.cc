#include "opensm_plugin/config.h"

#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "routing/routing.h"

namespace laas::plugin {

std::uint64_t parse_guid(const std::string& text) {
  if (text.empty()) throw std::invalid_argument("empty GUID");
  size_t used = 0;
  std::uint64_t v = 0;
  try {
    v = std::stoull(text, &used, 0);
  } catch (const std::exception&) {
    throw std::invalid_argument("'" + text + "' is not a GUID");
  }
  if (used != text.size() || text[0] == '-')
    throw std::invalid_argument("'" + text + "' is not a GUID");
  return v;
}

std::string format_guid(std::uint64_t guid) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(guid));
  return buf;
}

Config load_config(const std::string& path) {
  Config c;
  if (path.empty()) return c;
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw std::runtime_error(path + ": cannot be read");
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
  if (root.IsNull()) return c;
  if (!root.IsMap()) throw std::runtime_error(path + ": expected a mapping of keys");
  for (const auto& kv : root) {
    const std::string key = kv.first.as<std::string>();
    const YAML::Node& v = kv.second;
    try {
      if (key == "socket") {
        c.socket = v.IsNull() ? "" : v.as<std::string>();
      } else if (key == "socket_group") {
        c.socket_group = v.IsNull() ? "" : v.as<std::string>();
      } else if (key == "state_dir") {
        c.state_dir = v.as<std::string>();
      } else if (key == "state_must_exist") {
        c.state_must_exist = v.as<bool>();
      } else if (key == "resume_check") {
        c.resume_check = v.IsNull() ? "" : v.as<std::string>();
        if (!c.resume_check.empty() && c.resume_check.front() != '/')
          throw std::invalid_argument("must be an absolute path");
      } else if (key == "link_error_threshold") {
        const auto n = v.as<long long>();
        if (n < 0) throw std::invalid_argument("must be >= 0 (0: never isolate)");
        c.link_error_threshold = static_cast<std::uint64_t>(n);
      } else if (key == "link_error_clean_readings") {
        c.link_error_clean_readings = v.as<int>();
        if (c.link_error_clean_readings < 1 || c.link_error_clean_readings > 1000)
          throw std::invalid_argument("must be between 1 and 1000");
      } else if (key == "metrics_file") {
        c.metrics_file = v.IsNull() ? "" : v.as<std::string>();
        if (!c.metrics_file.empty() && c.metrics_file.front() != '/')
          throw std::invalid_argument("must be an absolute path");
      } else if (key == "resume_check_timeout_s") {
        c.resume_check_timeout_s = v.as<int>();
        if (c.resume_check_timeout_s < 1 || c.resume_check_timeout_s > 3600)
          throw std::invalid_argument("must be between 1 and 3600");
      } else if (key == "placer") {
        c.placer = v.as<std::string>();
      } else if (key == "topology") {
        c.topology = v.IsNull() ? "" : v.as<std::string>();
      } else if (key == "tenants_poll_ms") {
        c.tenants_poll_ms = v.as<int>();
        if (c.tenants_poll_ms < 0) throw std::invalid_argument("must be >= 0");
      } else if (key == "routing_threads") {
        c.routing_threads = v.as<int>();
        if (c.routing_threads < 0 || c.routing_threads > routing::kMaxThreads)
          throw std::invalid_argument("must be between 0 (one per core) and " +
                                      std::to_string(routing::kMaxThreads));
      } else if (key == "manage_partitions") {
        c.manage_partitions = v.as<bool>();
      } else if (key == "partitions_base") {
        c.partitions_base = v.IsNull() ? "" : v.as<std::string>();
      } else if (key == "slurm_node_names" || key == "openstack_hosts" ||
                 key == "openstack_projects" || key == "servers") {
        if (!v.IsMap() && !v.IsNull()) throw std::invalid_argument("expected a mapping of names");
        auto& map = key == "slurm_node_names"  ? c.slurm_node_names
                    : key == "openstack_hosts" ? c.openstack_hosts
                    : key == "servers"         ? c.servers
                                               : c.openstack_projects;
        for (const auto& e : v) map[e.first.as<std::string>()] = e.second.as<std::string>();
      } else if (key == "management" || key == "shared_services") {
        if (!v.IsSequence() && !v.IsNull())
          throw std::invalid_argument("expected a list of port GUIDs");
        auto& list = key == "management" ? c.management : c.shared_services;
        for (const auto& g : v) list.push_back(parse_guid(g.as<std::string>()));
      } else if (key == "fail_open") {
        c.fail_open = v.as<bool>();
      } else {
        throw std::invalid_argument("unknown key");
      }
    } catch (const YAML::Exception& e) {
      throw std::runtime_error(path + ": key '" + key + "': " + e.what());
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(path + ": key '" + key + "': " + e.what());
    }
  }
  while (c.state_dir.size() > 1 && c.state_dir.back() == '/') c.state_dir.pop_back();
  return c;
}

}  // namespace laas::plugin

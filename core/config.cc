#include "core/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "allocator/placer.h"
#include "routing/routing.h"
#include "service/etcd_client.h"
#include "util/guid.h"
#include "util/text.h"

namespace laas::core {

std::uint64_t parse_guid(const std::string& text) { return util::guid_or_throw(text); }

std::string format_guid(std::uint64_t guid) { return util::guid_hex(guid); }

namespace {

std::string where(const std::string& path, const YAML::Node& node) {
  const auto mark = node.Mark();
  return mark.line >= 0 ? path + ":" + std::to_string(mark.line + 1) : path;
}

std::string absolute_path_or_empty(const YAML::Node& v) {
  std::string text = v.IsNull() ? "" : v.as<std::string>();
  if (!text.empty() && text.front() != '/') throw std::invalid_argument("must be an absolute path");
  return text;
}

int int_between(const YAML::Node& v, int low, int high, const std::string& what) {
  const int n = v.as<int>();
  if (n < low || n > high) throw std::invalid_argument("must be " + what);
  return n;
}

// Lists that grant a privilege take port GUIDs only: a name is the host's own word.
void read_guids(const std::string& path, const YAML::Node& v, std::vector<std::uint64_t>& list,
                std::vector<std::string>& problems, const std::string& key) {
  if (v.IsNull()) return;
  if (!v.IsSequence()) throw std::invalid_argument("expected a list of port GUIDs");
  for (const auto& g : v) {
    const std::string text = g.IsScalar() ? g.as<std::string>() : std::string("(not a scalar)");
    if (auto guid = util::parse_guid(text)) {
      list.push_back(*guid);
      continue;
    }
    problems.push_back(where(path, g) + ": key '" + key + "': '" + text + "' is not a port GUID (" +
                       util::kGuidGrammar +
                       "); privileges are granted by GUID only, never by a host's name");
  }
}

std::string absolute_path(const YAML::Node& v) {
  std::string text = absolute_path_or_empty(v);
  if (text.empty()) throw std::invalid_argument("must be an absolute path");
  return text;
}

// reload: a list of words (the argv), never one string a shell would split.
std::vector<std::string> argv_list(const YAML::Node& v) {
  if (!v.IsSequence() || v.size() == 0)
    throw std::invalid_argument(
        "expected a non-empty list of words (an argv, run without a shell), e.g. [kill, -HUP, "
        "'1234']");
  std::vector<std::string> argv;
  for (const auto& w : v) {
    if (!w.IsScalar()) throw std::invalid_argument("every word must be a plain string");
    argv.push_back(w.as<std::string>());
  }
  if (argv[0].empty()) throw std::invalid_argument("the program (first word) is empty");
  return argv;
}

void apply_sdn_key(const std::string& key, const YAML::Node& v, SdnConfig& s) {
  if (key == "lfts_file") {
    s.lfts_file = absolute_path(v);
  } else if (key == "partitions_file") {
    s.partitions_file = absolute_path(v);
  } else if (key == "reload") {
    s.reload = argv_list(v);
  } else if (key == "reload_timeout") {
    s.reload_timeout_s = int_between(v, 1, 600, "between 1 and 600 seconds");
  } else if (key == "discover_interval") {
    s.discover_interval_s = int_between(v, 0, 86400, "between 0 (on changes only) and 86400 s");
  } else if (key == "readback_timeout") {
    s.readback_timeout_s = int_between(v, 0, 600, "between 0 (no read-back) and 600 seconds");
  } else if (key == "ca") {
    s.ca = v.IsNull() ? "" : v.as<std::string>();
  } else if (key == "port") {
    s.port = int_between(v, 0, 254, "between 0 (the first active) and 254");
  } else if (key == "ibnetdiscover") {
    s.ibnetdiscover = v.IsNull() ? "" : v.as<std::string>();
  } else if (key == "discover_timeout") {
    s.discover_timeout_s = int_between(v, 1, 3600, "between 1 and 3600 seconds");
  } else {
    throw std::invalid_argument(
        "unknown key (lfts_file, partitions_file, reload, reload_timeout, discover_interval, "
        "readback_timeout, ca, port, ibnetdiscover, discover_timeout)");
  }
}

// Each sub-key is its own problem ("key 'sdn.reload': ..."), the others still read.
void read_sdn(const std::string& path, const YAML::Node& v, SdnConfig& s,
              std::vector<std::string>& problems) {
  if (!v.IsMap()) throw std::invalid_argument("expected a mapping (lfts_file, reload, ...)");
  s.present = true;
  for (const auto& kv : v) {
    const std::string key = kv.first.IsScalar() ? kv.first.as<std::string>() : "?";
    const SdnConfig before = s;
    try {
      apply_sdn_key(key, kv.second, s);
    } catch (const YAML::Exception& e) {
      s = before;
      problems.push_back(where(path, kv.first) + ": key 'sdn." + key + "': " + e.msg);
    } catch (const std::invalid_argument& e) {
      s = before;
      problems.push_back(where(path, kv.first) + ": key 'sdn." + key + "': " + e.what());
    }
  }
}

// The `etcd:` mapping; a wrong entry throws std::invalid_argument naming it ("etcd.KEY: why").
void read_etcd(const YAML::Node& v, Config::Etcd& e) {
  if (!v.IsMap()) throw std::invalid_argument("expected a mapping (endpoints, prefix, ...)");
  int ttl_line = 0;  // where lease_ttl_s was given (0: not given)
  for (const auto& kv : v) {
    const std::string key = kv.first.as<std::string>();
    const YAML::Node& value = kv.second;
    const auto bad = [&](const std::string& why) {
      return std::invalid_argument("'etcd." + key + "' (line " +
                                   std::to_string(value.Mark().line + 1) + "): " + why);
    };
    try {
      if (key == "endpoints") {
        if (!value.IsSequence() || value.size() == 0)
          throw bad("expected a list of host:port or http(s)://host:port");
        e.endpoints.clear();
        for (const auto& one : value) {
          const std::string text = one.as<std::string>();
          try {
            service::etcd::endpoint_url(text);
          } catch (const std::invalid_argument& why) {
            throw bad(why.what());
          }
          e.endpoints.push_back(text);
        }
      } else if (key == "prefix") {
        e.prefix = value.as<std::string>();
        if (e.prefix.empty() || e.prefix.front() != '/' || e.prefix.back() != '/')
          throw bad("must start and end with '/' (e.g. /laas/)");
      } else if (key == "cacert" || key == "cert" || key == "key") {
        std::string& file = key == "cacert" ? e.cacert : key == "cert" ? e.cert : e.key;
        file = absolute_path_or_empty(value);
      } else if (key == "timeout_ms") {
        e.timeout_ms = int_between(value, 100, 60000, "between 100 and 60000");
      } else if (key == "lease_ttl_s") {
        e.lease_ttl_s =
            int_between(value, service::etcd::kMinLeaseTtlS, service::etcd::kMaxLeaseTtlS,
                        "between " + std::to_string(service::etcd::kMinLeaseTtlS) + " and " +
                            std::to_string(service::etcd::kMaxLeaseTtlS));
        ttl_line = value.Mark().line + 1;
      } else {
        throw bad("unknown key (endpoints, prefix, cacert, cert, key, timeout_ms, lease_ttl_s)");
      }
    } catch (const YAML::Exception& why) {
      throw bad(why.msg);
    } catch (const std::invalid_argument& why) {
      const std::string text = why.what();
      if (text.rfind("'etcd.", 0) == 0) throw;
      throw bad(text);
    }
  }
  if (e.cert.empty() != e.key.empty())
    throw std::invalid_argument("'etcd.cert' and 'etcd.key' go together");
  // Not given: the default, raised to two deadlines for a long timeout_ms.
  if (!ttl_line) e.lease_ttl_s = std::max(e.lease_ttl_s, (2 * e.timeout_ms + 999) / 1000);
  if (const std::string why = service::etcd::lease_ttl_problem(e.lease_ttl_s, e.timeout_ms);
      !why.empty())
    throw std::invalid_argument("'etcd.lease_ttl_s' (line " + std::to_string(ttl_line) +
                                "): " + why);
}

void apply_key(const std::string& path, const std::string& key, const YAML::Node& v, Config& c,
               std::vector<std::string>& problems) {
  if (key == "state_store") {
    const std::string kind = v.as<std::string>();
    if (kind != "dir" && kind != "etcd")
      throw std::invalid_argument("must be 'dir' or 'etcd', not '" + kind + "'");
    c.state_store = kind;
  } else if (key == "etcd") {
    read_etcd(v, c.etcd);
  } else if (key == "socket") {
    c.socket = v.IsNull() ? "" : v.as<std::string>();
  } else if (key == "socket_group") {
    c.socket_group = v.IsNull() ? "" : v.as<std::string>();
  } else if (key == "socket_read_group") {
    c.socket_read_group = v.IsNull() ? "" : v.as<std::string>();
  } else if (key == "state_dir") {
    c.state_dir = v.as<std::string>();
    if (c.state_dir.empty() || c.state_dir.front() != '/')
      throw std::invalid_argument("must be an absolute path");
    while (c.state_dir.size() > 1 && c.state_dir.back() == '/') c.state_dir.pop_back();
  } else if (key == "state_must_exist") {
    c.state_must_exist = v.as<bool>();
  } else if (key == "resume_check") {
    c.resume_check = absolute_path_or_empty(v);
  } else if (key == "link_error_threshold") {
    const auto n = v.as<long long>();
    if (n < 0) throw std::invalid_argument("must be >= 0 (0: never isolate)");
    c.link_error_threshold = static_cast<std::uint64_t>(n);
  } else if (key == "link_error_consecutive_readings") {
    c.link_error_consecutive_readings = int_between(v, 1, 1000, "between 1 and 1000");
  } else if (key == "link_error_clean_readings") {
    c.link_error_clean_readings = int_between(v, 1, 1000, "between 1 and 1000");
  } else if (key == "metrics_file") {
    c.metrics_file = absolute_path_or_empty(v);
  } else if (key == "resume_check_timeout_s") {
    c.resume_check_timeout_s = int_between(v, 1, 3600, "between 1 and 3600");
  } else if (key == "placer") {
    const std::string placer = v.as<std::string>();
    allocator::make_placer(placer);  // throws std::invalid_argument naming the placers
    c.placer = placer;
  } else if (key == "topology") {
    c.topology = v.IsNull() ? "" : v.as<std::string>();
  } else if (key == "tenants_poll_ms") {
    c.tenants_poll_ms = int_between(v, 0, 3600000, ">= 0");
  } else if (key == "routing_threads") {
    c.routing_threads =
        int_between(v, 0, routing::kMaxThreads,
                    "between 0 (one per core) and " + std::to_string(routing::kMaxThreads));
  } else if (key == "switch_check_interval") {
    c.switch_check_interval_s = int_between(v, 0, 86400, "between 0 (no check) and 86400 seconds");
  } else if (key == "manage_partitions") {
    c.manage_partitions = v.as<bool>();
  } else if (key == "partitions_base") {
    c.partitions_base = v.IsNull() ? "" : v.as<std::string>();
  } else if (key == "slurm_node_names" || key == "openstack_hosts" || key == "openstack_projects" ||
             key == "servers") {
    if (!v.IsMap() && !v.IsNull()) throw std::invalid_argument("expected a mapping of names");
    auto& map = key == "slurm_node_names"  ? c.slurm_node_names
                : key == "openstack_hosts" ? c.openstack_hosts
                : key == "servers"         ? c.servers
                                           : c.openstack_projects;
    for (const auto& e : v) map[e.first.as<std::string>()] = e.second.as<std::string>();
  } else if (key == "management") {
    read_guids(path, v, c.management, problems, key);
  } else if (key == "shared_services") {
    read_guids(path, v, c.shared_services, problems, key);
  } else if (key == "subnet_managers") {
    read_guids(path, v, c.subnet_managers, problems, key);
  } else if (key == "free_pool") {
    const std::string mode = v.as<std::string>();
    if (mode != "open" && mode != "closed")
      throw std::invalid_argument("must be 'open' or 'closed', not '" + mode + "'");
    c.free_pool_open = mode == "open";
  } else if (key == "fail_open") {
    c.fail_open = v.as<bool>();
  } else if (key == "whole_leaves") {
    c.whole_leaves = v.as<bool>();
  } else if (key == "sdn") {
    read_sdn(path, v, c.sdn, problems);
  } else {
    throw std::invalid_argument("unknown key");
  }
}

// "ADDR:PORT" (an IPv6 address in brackets): laas-api listens there.
void check_listen(const std::string& text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0)
    throw std::invalid_argument("'" + text + "' is not ADDR:PORT");
  const std::string port = text.substr(colon + 1);
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) < 1 ||
      std::stoi(port) > 65535)
    throw std::invalid_argument("'" + text + "': the port must be 1-65535");
}

std::vector<std::string> read_names(const YAML::Node& v) {
  if (v.IsNull()) return {};
  if (!v.IsSequence()) throw std::invalid_argument("expected a list of certificate CNs");
  std::vector<std::string> names;
  for (const auto& n : v) {
    if (!n.IsScalar() || n.as<std::string>().empty())
      throw std::invalid_argument("expected a list of certificate CNs (non-empty strings)");
    names.push_back(n.as<std::string>());
  }
  return names;
}

void apply_api_key(const std::string& key, const YAML::Node& v, ApiConfig& a) {
  if (key == "listen") {
    a.listen = v.as<std::string>();
    check_listen(a.listen);
  } else if (key == "cert" || key == "key" || key == "client_ca") {
    (key == "cert" ? a.cert : key == "key" ? a.key : a.client_ca) = absolute_path_or_empty(v);
  } else if (key == "writers" || key == "readers") {
    (key == "writers" ? a.writers : a.readers) = read_names(v);
  } else if (key == "threads") {
    a.threads = int_between(v, 1, 256, "between 1 and 256");
  } else if (key == "max_connections") {
    a.max_connections = int_between(v, 1, 65536, "between 1 and 65536");
  } else {
    throw std::invalid_argument("unknown key");
  }
}

// The `api:` section, each problem in `problems` (file, line, api.KEY, why).
void read_api(const std::string& path, const YAML::Node& v, ApiConfig& a,
              std::vector<std::string>& problems) {
  if (v.IsNull()) return;
  if (!v.IsMap()) {
    problems.push_back(where(path, v) + ": key 'api': expected a mapping of laas-api settings");
    return;
  }
  for (const auto& kv : v) {
    const std::string key = kv.first.IsScalar() ? kv.first.as<std::string>() : "?";
    try {
      apply_api_key(key, kv.second, a);
    } catch (const YAML::Exception& e) {
      problems.push_back(where(path, kv.first) + ": key 'api." + key + "': " + e.msg);
    } catch (const std::invalid_argument& e) {
      problems.push_back(where(path, kv.first) + ": key 'api." + key + "': " + e.what());
    }
  }
}

}  // namespace

Config check_config(const std::string& path) {
  Config c;
  if (path.empty()) return c;
  YAML::Node root;
  // Whatever keeps the file from being read as a whole leaves every key a guess, state_dir's
  // included.
  const std::string guessed =
      "; no key can be read, so the state directory is not known and "
      "nothing is read from the default one (" +
      c.state_dir + ")";
  c.state_dir_unknown = true;
  std::string text;
  if (const int error = util::read_whole_file(path, &text); error != 0) {
    c.problems.push_back(path + ": cannot be read (" + std::strerror(error) + ")" + guessed);
    return c;
  }
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    c.problems.push_back(path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg + guessed);
    return c;
  }
  // An empty file is no configuration: a file cut to zero by a full disk, or truncated by a
  // copy that failed, must not pass for the defaults.
  if (root.IsNull()) {
    c.problems.push_back(path +
                         ": holds no key (empty, or only comments: cut off?); write at least "
                         "'state_dir:'" +
                         guessed);
    return c;
  }
  if (!root.IsMap()) {
    c.problems.push_back(path + ": expected a mapping of keys" + guessed);
    return c;
  }
  c.state_dir_unknown = false;
  for (const auto& kv : root) {
    if (!kv.first.IsScalar()) {
      c.problems.push_back(where(path, kv.first) + ": a key must be a plain name");
      continue;
    }
    const std::string key = kv.first.as<std::string>();
    if (key == "api") {
      read_api(path, kv.second, c.api, c.api_problems);
      continue;
    }
    // A key that cannot be read keeps its default, but only to fill the struct: the problem
    // makes the plugin route closed.
    Config before = c;
    try {
      apply_key(path, key, kv.second, c, c.problems);
    } catch (const YAML::Exception& e) {
      c = std::move(before);
      c.problems.push_back(where(path, kv.first) + ": key '" + key + "': " + e.msg);
      c.state_dir_unknown |= key == "state_dir";
    } catch (const std::invalid_argument& e) {
      c = std::move(before);
      c.problems.push_back(where(path, kv.first) + ": key '" + key + "': " + e.what());
      c.state_dir_unknown |= key == "state_dir";
    }
  }
  // The store is as unknown as a wrong state_dir: nothing is read from a guessed one.
  if (c.state_store == "etcd" && c.etcd.endpoints.empty()) {
    c.problems.push_back(path + ": key 'state_store': 'etcd' needs 'etcd: {endpoints: [...]}'");
    c.state_dir_unknown = true;
  }
  for (const auto& p : c.problems)
    if (p.find("key 'state_store'") != std::string::npos ||
        p.find("key 'etcd'") != std::string::npos)
      c.state_dir_unknown = true;
  return c;
}

std::vector<std::string> sdn_problems(const Config& c) {
  std::vector<std::string> out;
  if (!c.sdn.present) {
    out.push_back("sdn: laas-sdn needs an 'sdn:' section (lfts_file, partitions_file, reload)");
    return out;
  }
  if (c.sdn.lfts_file.empty())
    out.push_back("sdn.lfts_file: required (the SM's lfts_file, routing_engine file)");
  if (c.sdn.partitions_file.empty())
    out.push_back("sdn.partitions_file: required (the SM's partition_config_file)");
  if (c.sdn.reload.empty())
    out.push_back("sdn.reload: required (an argv telling the SM to re-read its files)");
  if (!c.sdn.lfts_file.empty() && c.sdn.lfts_file == c.sdn.partitions_file)
    out.push_back("sdn.partitions_file: the same file as sdn.lfts_file");
  return out;
}

Config load_config(const std::string& path) {
  Config c = check_config(path);
  if (c.problems.empty()) return c;
  std::string all;
  for (const auto& p : c.problems) all += (all.empty() ? "" : "; ") + p;
  throw std::runtime_error(all);
}

}  // namespace laas::core

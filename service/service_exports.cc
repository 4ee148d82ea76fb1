// The tenant service and the rest of the cluster: the managed partitions.conf (generated from the
// tenants, written atomically, applied by OpenSM) and the export formats (`laasctl export`).
#include "service/service_exports.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "export/formats.h"
#include "export/names.h"
#include "export/openstack.h"
#include "export/partitions.h"
#include "export/routing_chains.h"
#include "export/slurm.h"
#include "service/partition_inputs.h"
#include "service/physical_ids.h"
#include "service/request_params.h"
#include "service/views.h"

namespace laas::service {

using nlohmann::json;

namespace {

exports::SlurmOptions slurm_options_of(const ExportConfig& cfg, const json& params) {
  exports::SlurmOptions options;
  options.node_names = cfg.slurm_node_names;
  options.magnetic = get_bool(params, "magnetic", false);
  options.partitions = get_bool(params, "slurm_partitions", false);
  // Every tenant listed: reservations of departed tenants go.
  options.prune = !params.contains("tenant");
  return options;
}

}  // namespace

// The master's: its tenants as routed (the GUID recorded for a slot whose host is down or
// unaccepted, as `tenant show` says), straight from memory.
std::string ServiceExports::partitions_text() const {
  std::vector<exports::TenantRecord> records;
  if (st_.cluster) {
    std::map<std::string, const PersistedTenant*> recorded;
    for (const auto& p : st_.persisted.tenants) recorded.emplace(p.name, &p);
    records.reserve(st_.cluster->tenants().size());
    for (const auto& [name, t] : st_.cluster->tenants()) {
      const auto it = recorded.find(name);
      records.push_back(
          partition_record(to_persisted(t, *st_.ids, it == recorded.end() ? nullptr : it->second)));
    }
  }
  return managed_partitions_text(records, partition_members(), partition_options());
}

PartitionMembers ServiceExports::partition_members() const {
  PartitionMembers m;
  if (!st_.view) return m;
  // Management hosts (and the SM's port) are full members of every tenant partition: they
  // serve every tenant. A slot never seen has no port to name.
  for (auto h : st_.view->management_hosts)
    if (const auto g = st_.view->host_guid(h)) m.management.push_back(g);
  m.outside = st_.view->outside_members;
  if (!st_.cluster) return m;
  // An open free pool (free_pool: open) talks as before LaaS: hosts without a tenant are full
  // members of the default partition, so two of them still reach each other (two limited
  // members cannot).
  if (st_.config.free_pool_open)
    for (topology::HostId h = 0; h < st_.view->tree.num_hosts(); ++h)
      if (st_.cluster->state().host_owner(h) == allocator::kFree &&
          st_.view->embedding.host_node[h] >= 0)
        m.free_pool.push_back(st_.view->host_guid(h));
  for (const auto& p : st_.persisted.tenants)
    if (!st_.cluster->find(p.name)) m.unrouted.push_back(p.name);
  return m;
}

bool ServiceExports::record_partition_members() {
  if (!st_.view || !st_.cluster) return false;
  return record_members(partition_members(), st_.persisted);
}

exports::PartitionOptions ServiceExports::partition_options() const {
  exports::PartitionOptions options;
  const auto base = partitions_base();
  options.base_text = base.text;
  options.base_name = base.name;
  options.management = {{"SELF", exports::Membership::kFull}};
  return options;
}

// The administrator's partitions: partitions_base when set, else the managed file itself
// (everything outside LaaS's markers is kept), else none.
ServiceExports::PartitionsBase ServiceExports::partitions_base() const {
  PartitionsBase b;
  const auto& base = st_.config.exports.partitions_base_file;
  const auto& managed = st_.config.exports.managed_partitions_file;
  bool exists = false;
  if (!base.empty()) {
    b.text = read_text_io(st_, base, &exists);
    b.name = base;
    if (!exists) fail(error::kUnavailable, "cannot read the base partitions file " + base);
  } else if (!managed.empty()) {
    const std::string text = read_text_io(st_, managed, &exists);
    if (exists) {
      b.text = text;
      b.name = managed;
    }
  }
  return b;
}

// The way back at uninstall (docs/admin-guide.md, "Uninstall"): before LaaS first replaces
// partitions.conf, the administrator's own file is kept beside it as <file>.pre-laas. Once:
// an existing backup is never replaced (a second install must not save LaaS's file over the
// original), and a file holding LaaS's markers was written by LaaS, not by the administrator.
// A hard link keeps the very file (content, owner, mode, times) and either appears whole or
// not at all; the rename that follows, in the same directory, is synced with it. Without the
// backup nothing is written: the original would be lost for good.
void ServiceExports::write_managed_partitions(const std::string& text) {
  // On the state directory's worker (it may share a file system with it), with copies.
  st_.io->call(
      [path = st_.config.exports.managed_partitions_file, text, log = st_.log] {
        const std::string backup = path + ".pre-laas";
        if (::access(backup.c_str(), F_OK) != 0) {
          bool exists = false;
          const std::string original = read_text(path, &exists);
          if (exists && original.find(exports::kBeginMarker) == std::string::npos) {
            if (::link(path.c_str(), backup.c_str()) == 0)
              log(LogLevel::kInfo, "laas: kept the original " + path + " as " + backup +
                                       " (put it back when LaaS is removed)");
            else if (errno != EEXIST)
              throw std::runtime_error("cannot keep the original " + path + " as " + backup + ": " +
                                       std::strerror(errno));
          }
        }
        write_file_atomically(path, text, kFileMode);
      },
      kIoDeadline);
}

// Writes the managed partitions.conf when its content changes. A generation error leaves the
// previous file in place: OpenSM would otherwise fall back to "everyone full member".
bool ServiceExports::refresh_managed_partitions() {
  const auto& path = st_.config.exports.managed_partitions_file;
  if (path.empty() || !st_.view) return false;
  // The file holds the tenants last routed: a state that cannot be read (or was never taken
  // over) says nothing about them, and rewriting from it would wipe every tenant's P_Key.
  if (!st_.condition.blocked.empty() || !st_.config.config_error.empty() || !st_.condition.loaded)
    return false;
  managed_.unsynced = false;
  // Members that changed without a change of the state (a free host gone): the standbys
  // learn of them too.
  if (record_partition_members() && holds_term(st_))
    placements_.save_placed("the members of the tenant partitions");
  try {
    const std::string text = partitions_text();
    if (text == managed_.last_written) return false;
    write_managed_partitions(text);
    managed_.last_written = text;
    st_.log(LogLevel::kInfo, "laas: wrote " + path + " (" +
                                 std::to_string(st_.cluster ? st_.cluster->tenants().size() : 0) +
                                 " tenant partitions)");
    return true;
  } catch (const RequestError& e) {
    st_.log(LogLevel::kError, "laas: " + path + " not updated: " + e.message);
  } catch (const NotAnsweringError& e) {
    // The P_Keys in place stay; written at the first routing run after it answers.
    if (!managed_.unsynced)
      st_.log(LogLevel::kError, "laas: " + path + " not updated yet: " + e.what());
    managed_.unsynced = true;
  } catch (const std::exception& e) {
    st_.log(LogLevel::kError, "laas: " + path + " not updated: " + e.what());
  }
  return false;
}

json ServiceExports::export_files(const json& params) const {
  const std::string format = get_string(params, "format");
  require_topology(st_);
  json all = json::array();
  if (params.contains("tenant")) {
    const std::string only = get_string(params, "tenant");
    const auto* t = st_.cluster->find(only);
    if (!t) fail(error::kNotFound, "no tenant named '" + only + "'");
    all.push_back(views_.tenant_json(*t));
  } else {
    for (const auto& [name, t] : st_.cluster->tenants()) all.push_back(views_.tenant_json(t));
  }
  const bool removal = get_bool(params, "remove", false);
  try {
    auto records = exports::tenants_from_json(all);
    std::map<std::string, std::uint16_t> pkeys;
    for (const auto& p : st_.persisted.tenants)
      if (p.pkey) pkeys.emplace(p.name, p.pkey);
    for (auto& r : records)
      if (const auto it = pkeys.find(r.name); it != pkeys.end()) r.pkey = it->second;
    const exports::Format* known = exports::find_format(format);
    if (!known)
      fail(error::kBadRequest,
           "unknown export format '" + format + "'; formats: " + exports::formats_text(false));
    // Schedulers see servers: one node (or compute host) a server, whatever its ports.
    if (known->per_server) one_host_per_server(records);
    json out = export_format(format, params, removal, records);
    out["format"] = format;
    return out;
  } catch (const exports::ExportError& e) {
    fail(error::kRefused, e.what());
  }
  return {};  // not reached: fail() throws
}

// One exporter a format of exports::kFormats: the content (and files) it writes. Throws
// exports::ExportError.
json ServiceExports::export_format(const std::string& format, const json& params, bool removal,
                                   const std::vector<exports::TenantRecord>& records) const {
  const auto& cfg = st_.config.exports;
  auto slurm_options = [&] { return slurm_options_of(cfg, params); };
  const std::map<std::string, std::function<json()>> exporters = {
      {"partitions",
       [&] {
         return json{{"content", partitions_text()}};
       }},
      {"routing-chains",
       [&] {
         const auto tree =
             exports::tree_from_fabric(st_.view->tree, st_.view->fabric, st_.view->embedding);
         const auto files = exports::generate_routing_chains(records, &tree, {});
         return json{{"files",
                      {{exports::kPortGroupsFile, files.port_groups},
                       {exports::kTopologiesFile, files.topologies},
                       {exports::kChainsFile, files.chains}}},
                     {"content", "# ---- pgrp_policy_file ----\n" + files.port_groups +
                                     "# ---- topo_policy_file ----\n" + files.topologies +
                                     "# ---- rch_policy_file ----\n" + files.chains}};
       }},
      {"slurm",
       [&] {
         const auto options = slurm_options();
         return json{{"content", removal ? exports::generate_slurm_release(records, options)
                                         : exports::generate_slurm_reservations(records, options)}};
       }},
      {"slurm-partitions",
       [&] {
         return json{{"content", exports::generate_slurm_partitions(records, slurm_options())}};
       }},
      {"slurm-topology",
       [&] {
         auto tree =
             exports::tree_from_fabric(st_.view->tree, st_.view->fabric, st_.view->embedding);
         one_leaf_per_server(tree);
         return json{{"content", exports::generate_slurm_topology(tree, slurm_options())}};
       }},
      {"k8s-labels",
       [&] {
         const auto nodes = k8s_nodes(records, params.contains("tenant"), removal);
         return json{{"content", exports::generate_k8s_labels(nodes, {})}};
       }},
      {"openstack",
       [&] {
         exports::OpenStackOptions options;
         options.projects = cfg.openstack_projects;
         options.host_names = cfg.openstack_hosts;
         return json{{"content", removal ? exports::generate_openstack_remove(records, options)
                                         : exports::generate_openstack_add(records, options)}};
       }},
  };
  return exporters.at(format)();
}

void ServiceExports::one_host_per_server(std::vector<exports::TenantRecord>& records) const {
  if (!st_.servers.multi_port()) return;
  for (auto& r : records) {
    std::vector<exports::Endpoint> hosts;
    std::vector<int> seen;
    for (const auto& h : r.hosts) {
      const auto id = st_.view->host_by_guid(h.guid);
      const int s = id ? st_.servers.server_of[*id] : -1;
      if (s >= 0 && std::find(seen.begin(), seen.end(), s) != seen.end()) continue;
      if (s >= 0) seen.push_back(s);
      hosts.push_back(h);
      if (s >= 0) hosts.back().name = st_.servers.names[s];
    }
    r.hosts = std::move(hosts);
  }
}

void ServiceExports::one_leaf_per_server(exports::TreeRecord& tree) const {
  if (!st_.servers.multi_port()) return;
  std::set<topology::Guid> dropped;
  std::vector<exports::SwitchRecord> kept;
  for (auto sw : tree.switches) {
    if (sw.level == 1) {
      std::vector<exports::Endpoint> down;
      for (auto d : sw.down) {
        const auto id = st_.view->host_by_guid(d.guid);
        if (id && st_.servers.ports[st_.servers.server_of[*id]].front() != *id) continue;
        if (id) d.name = st_.servers.names[st_.servers.server_of[*id]];
        down.push_back(std::move(d));
      }
      sw.down = std::move(down);
      if (sw.down.empty()) {
        dropped.insert(sw.guid);
        continue;
      }
    } else {
      sw.down.erase(
          std::remove_if(sw.down.begin(), sw.down.end(),
                         [&](const exports::Endpoint& d) { return dropped.count(d.guid); }),
          sw.down.end());
    }
    kept.push_back(std::move(sw));
  }
  tree.switches = std::move(kept);
}

std::vector<exports::K8sNode> ServiceExports::k8s_nodes(
    const std::vector<exports::TenantRecord>& records, bool only_listed, bool removal) const {
  const auto& view = *st_.view;
  const auto rails = topology::leaf_rails(view.tree, st_.servers);
  std::map<int, const exports::TenantRecord*> tenant_of;  // server -> its tenant
  for (const auto& r : records)
    for (const auto& h : r.hosts)
      if (const auto id = view.host_by_guid(h.guid)) tenant_of[st_.servers.server_of[*id]] = &r;
  std::vector<exports::K8sNode> nodes;
  for (int s = 0; s < st_.servers.count(); ++s) {
    const auto it = tenant_of.find(s);
    if (only_listed && it == tenant_of.end()) continue;
    const int leaf = view.tree.leaf_of_host(st_.servers.ports[s].front());
    const int node = view.embedding.switch_node[0][leaf];
    exports::K8sNode n;
    // kubelet registers a node by its host name in lower case.
    for (char c : st_.servers.names[s])
      n.name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    n.leaf = node >= 0 ? view.fabric.nodes[node].guid : 0;
    n.pod = view.tree.pod_of_leaf(leaf);
    n.rail_group = rails[leaf].first;
    if (it != tenant_of.end() && !removal) {
      n.tenant = it->second->name;
      n.pkey = it->second->pkey.value_or(0);
    }
    nodes.push_back(std::move(n));
  }
  return nodes;
}

// P_Keys are fixed when a tenant is created (in creation order, so a new tenant never moves an
// existing one's key); state written before P_Keys existed gets them here, in file order.
void ServiceExports::assign_missing_pkeys() {
  std::set<std::uint16_t> taken, reserved;
  for (const auto& t : st_.persisted.tenants)
    if (t.pkey) taken.insert(t.pkey);
  // New keys stay clear of the base file's explicit and auto-numbered keys. A base that cannot
  // be read or parsed reserves nothing here; writing partitions.conf then refuses the change.
  try {
    const auto base = partitions_base();
    if (base.text) reserved = exports::base_reserved_pkeys(*base.text, base.name);
  } catch (...) {  // ExportError, or RequestError for a base file that cannot be read
  }
  for (auto& t : st_.persisted.tenants) {
    if (t.pkey) continue;
    exports::TenantRecord r;
    r.name = t.name;
    std::set<std::uint16_t> avoid = taken;
    avoid.insert(reserved.begin(), reserved.end());
    t.pkey = exports::assign_pkeys({r}, avoid).front();
    taken.insert(t.pkey);
  }
}

}  // namespace laas::service

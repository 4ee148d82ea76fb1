#include "export/records.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "topology/embedding.h"
#include "util/guid.h"

namespace laas::exports {

namespace {
constexpr const char* kJson = "tenant JSON";
}

ExportError::ExportError(std::string format, std::string subject, const std::string& message)
    : std::runtime_error(format + ": " + subject + ": " + message),
      format_(std::move(format)),
      subject_(std::move(subject)) {}

std::string guid_hex(Guid guid) { return util::guid_hex(guid); }

Guid parse_guid(std::string_view text, const std::string& format, const std::string& subject) {
  if (auto guid = util::parse_guid(text)) return *guid;
  throw ExportError(format, subject,
                    "'" + std::string(text) + "' is not a GUID (" + util::kGuidGrammar + ")");
}

namespace {

using nlohmann::json;

const json& field(const json& j, const char* key, const std::string& subject) {
  if (!j.is_object()) throw ExportError(kJson, subject, "expected an object");
  auto it = j.find(key);
  if (it == j.end()) throw ExportError(kJson, subject, std::string("missing field '") + key + "'");
  return *it;
}

std::string get_string(const json& j, const char* key, const std::string& subject) {
  const auto& v = field(j, key, subject);
  if (!v.is_string())
    throw ExportError(kJson, subject, std::string("field '") + key + "' must be a string");
  return v.get<std::string>();
}

Guid get_guid(const json& j, const std::string& subject) {
  return parse_guid(get_string(j, "guid", subject), kJson, subject + " field 'guid'");
}

int get_int(const json& j, const char* key, const std::string& subject, int lo, int hi) {
  const auto& v = field(j, key, subject);
  if (!v.is_number_integer() || v.get<long long>() < lo || v.get<long long>() > hi)
    throw ExportError(kJson, subject,
                      std::string("field '") + key + "' must be an integer in " +
                          std::to_string(lo) + ".." + std::to_string(hi));
  return static_cast<int>(v.get<long long>());
}

Endpoint port_end(const json& j, const std::string& subject) {
  Endpoint e;
  e.name = get_string(j, "name", subject);
  e.guid = get_guid(j, subject);
  e.port = get_int(j, "port", subject, 1, 254);
  return e;
}

TenantRecord tenant(const json& t, std::size_t index) {
  std::string subject = "tenant #" + std::to_string(index);
  TenantRecord r;
  r.name = get_string(t, "name", subject);
  subject = "tenant '" + r.name + "'";
  if (auto it = t.find("pkey"); it != t.end() && !it->is_null()) {
    long long v = -1;
    if (it->is_number_integer()) {
      v = it->get<long long>();
    } else if (it->is_string()) {
      const auto s = it->get<std::string>();
      v = static_cast<long long>(parse_guid(s, kJson, subject + " field 'pkey'"));
    }
    if (v < 1 || v > 0x7ffe)
      throw ExportError(kJson, subject, "field 'pkey' must be a P_Key in 0x0001..0x7ffe");
    r.pkey = static_cast<std::uint16_t>(v);
  }
  for (const char* key : {"slurm_accounts", "slurm_users"}) {
    auto it = t.find(key);
    if (it == t.end() || it->is_null()) continue;
    if (!it->is_array())
      throw ExportError(kJson, subject, std::string("field '") + key + "' must be an array");
    auto& out = std::string(key) == "slurm_accounts" ? r.slurm_accounts : r.slurm_users;
    for (const auto& v : *it) {
      if (!v.is_string())
        throw ExportError(kJson, subject, std::string("field '") + key + "' must hold strings");
      out.push_back(v.get<std::string>());
    }
  }
  if (auto it = t.find("openstack_project"); it != t.end() && !it->is_null()) {
    if (!it->is_string())
      throw ExportError(kJson, subject, "field 'openstack_project' must be a string");
    r.openstack_project = it->get<std::string>();
  }
  const auto& hosts = field(t, "hosts", subject);
  if (!hosts.is_array())
    throw ExportError(kJson, subject, "field 'hosts' must be an array of host objects");
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    const std::string hs = subject + " host #" + std::to_string(i);
    Endpoint h;
    h.name = get_string(hosts[i], "name", hs);
    h.guid = get_guid(hosts[i], subject + " host '" + h.name + "'");
    h.lid = static_cast<std::uint16_t>(
        get_int(hosts[i], "lid", subject + " host '" + h.name + "'", 0, 0xffff));
    r.hosts.push_back(std::move(h));
  }
  if (auto it = t.find("links"); it != t.end()) {
    if (!it->is_array()) throw ExportError(kJson, subject, "field 'links' must be an array");
    for (std::size_t i = 0; i < it->size(); ++i) {
      const std::string ls = subject + " link #" + std::to_string(i);
      LinkRecord l;
      l.lower = port_end(field((*it)[i], "switch", ls), ls + " 'switch'");
      l.upper = port_end(field((*it)[i], "peer", ls), ls + " 'peer'");
      r.links.push_back(std::move(l));
    }
  }
  return r;
}

}  // namespace

std::vector<TenantRecord> tenants_from_json(const json& j) {
  std::vector<TenantRecord> out;
  const json* list = &j;
  if (j.is_object() && j.contains("tenants")) list = &j["tenants"];
  if (list->is_array()) {
    for (std::size_t i = 0; i < list->size(); ++i) out.push_back(tenant((*list)[i], i));
  } else if (list->is_object()) {
    out.push_back(tenant(*list, 0));
  } else {
    throw ExportError(kJson, "document", "expected a tenant object or an array of tenants");
  }
  return out;
}

std::vector<TenantRecord> tenants_from_json_text(std::string_view text) {
  json j;
  try {
    j = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    throw ExportError(kJson, "document", e.what());
  }
  return tenants_from_json(j);
}

TreeRecord tree_from_fabric(const topology::FatTree& tree, const topology::Fabric& fabric,
                            const topology::Embedding& emb) {
  TreeRecord out;
  for (int level = 1; level <= tree.height(); ++level) {
    for (int index = 0; index < tree.num_switches(level); ++index) {
      const int node = emb.switch_node[level - 1][index];
      const auto& sw = fabric.nodes[node];
      SwitchRecord rec{sw.name, sw.guid, level, {}};
      for (int p = 1; p < static_cast<int>(sw.ports.size()); ++p) {
        const int peer = sw.ports[p].peer_node;
        if (peer < 0 || emb.node_model[peer].first != level - 1) continue;
        const auto& child = fabric.nodes[peer];
        rec.down.push_back({child.name, child.is_switch ? child.guid : child.port_guid, p});
      }
      out.switches.push_back(std::move(rec));
    }
  }
  return out;
}

}  // namespace laas::exports

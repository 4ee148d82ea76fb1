// Plain records describing an allocation, the input of every export generator.
//
// They carry the same fields `laasctl tenant show --json` prints (GUIDs as "0x%016x" strings
// there), so an exporter can run inside the plugin (from the live allocation) or offline (from
// saved JSON). Generators are pure functions: records + options in, file text out; they throw
// ExportError naming the format, the offending tenant/host and the field.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "records/tenant_record.h"

namespace laas::topology {
struct Fabric;
struct Embedding;
class FatTree;
}  // namespace laas::topology

namespace laas::exports {

using Guid = std::uint64_t;

// The records generators read: one type with allocations.json (records/tenant_record.h).
using records::Endpoint;
using records::LinkRecord;
using records::TenantRecord;

// A switch of the tree with what hangs below it: hosts for a leaf (level 1), switches of the
// level below otherwise. `down[i].port` is this switch's port towards the child.
struct SwitchRecord {
  std::string name;
  Guid guid = 0;
  int level = 1;
  std::vector<Endpoint> down;  // hosts: port GUID and name; switches: node GUID and name
};

struct TreeRecord {
  std::vector<SwitchRecord> switches;  // ordered by level, then index
};

// A generator or reader refusing its input. what() is "<format>: <subject>: <message>".
class ExportError : public std::runtime_error {
 public:
  ExportError(std::string format, std::string subject, const std::string& message);
  const std::string& format() const { return format_; }
  const std::string& subject() const { return subject_; }

 private:
  std::string format_;
  std::string subject_;
};

// "0x%016x", the form laasctl and partitions.conf use.
std::string guid_hex(Guid guid);
// Accepts "0x" + 1..16 hex digits. Throws ExportError(format, subject, ...) otherwise.
Guid parse_guid(std::string_view text, const std::string& format, const std::string& subject);

// Reads `laasctl tenant show --json` output: a tenant object, an array of them, or an object
// with a "tenants" array. "pkey" (number or "0x..." string) is optional, so are
// "slurm_accounts"/"slurm_users" (arrays of strings) and "openstack_project" (a string). Throws
// ExportError (format "tenant JSON") naming the tenant and field.
std::vector<TenantRecord> tenants_from_json(const nlohmann::json& j);
std::vector<TenantRecord> tenants_from_json_text(std::string_view text);

// The tree as the fabric is cabled: every switch of the model with its children, by level.
TreeRecord tree_from_fabric(const topology::FatTree& tree, const topology::Fabric& fabric,
                            const topology::Embedding& embedding);

}  // namespace laas::exports

// OpenSM partitions.conf: one partition per tenant, and a validator for the file's syntax.
//
// OpenSM 3.3.23 silently falls back to "every port a full member of the default partition" when
// partitions.conf does not parse, so whoever writes the file must validate it first.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "export/records.h"

namespace laas::exports {

enum class Membership { kFull, kLimited, kBoth };

// A management port added to every tenant partition: "SELF" (the SM's port) or a port GUID.
struct ManagementMember {
  std::string port = "SELF";
  Membership membership = Membership::kLimited;
};

struct PartitionOptions {
  // The administrator's partitions.conf. Kept verbatim, except a block between the
  // kBeginMarker/kEndMarker lines (an earlier generation) which is dropped. When it has no
  // partition with P_Key 0x7fff, kDefaultPartition is added. A base validate_partitions finds
  // errors in (ALL=full included) is refused: ExportError "base_name:line: message".
  std::optional<std::string> base_text;
  std::string base_name = "partitions.conf";  // for error messages
  // Management hosts are full members of every tenant partition (they serve every tenant:
  // login, storage, the SM). Listed in a second statement with the tenant's P_Key and no indx0.
  std::vector<ManagementMember> management = {{"SELF", Membership::kFull}};
  bool ipoib = true;  // mark tenant partitions ", ipoib" (broadcast group)
  // Mark tenant partitions ", indx0" (OpenSM 3.3.23 supports it): a tenant host's P_Key index
  // 0 -- what IPoIB's ib0 and most verbs applications use -- is its tenant's key, not the
  // default partition it is only a limited member of.
  bool indx0 = true;
  std::string name_prefix = "laas_";  // partition name = prefix + tenant name
};

inline constexpr const char* kBeginMarker = "# BEGIN LaaS tenant partitions";
inline constexpr const char* kEndMarker = "# END LaaS tenant partitions";
// Heads the default partition LaaS adds; that statement (its line and the member lines that
// follow it up to its ';') is regenerated with every file.
inline constexpr const char* kDefaultComment = "# Default partition added by LaaS";
// Hosts and the switches' management ports are limited members of the default partition: hosts
// reach the SM (and the management hosts LaaS adds by GUID), not each other nor the switches
// (their counters and vendor MADs are not for tenants); tenants meet only in their own
// partitions. OpenSM applies members left to right and a later entry overwrites an earlier one
// for the same port, so SELF=full after them makes an SM on a host or a switch full.
inline constexpr const char* kDefaultPartition =
    "Default=0x7fff, ipoib : ALL_CAS=limited, ALL_SWITCHES=limited, SELF=full ;";
inline constexpr std::size_t kMaxPartitionName = 31;     // osm_prtn_t::name is char[32]
inline constexpr std::size_t kMaxPartitionsLine = 4094;  // fgets(line, 4096 - 1) in OpenSM

// P_Keys a tenant must never take because of `base` (an administrator's partitions.conf, already
// valid): 0x7fff, every explicit P_Key, and for the N partitions without a P_Key (distinct
// names), the N lowest keys not otherwise used -- OpenSM numbers those from 0x0001 upwards,
// skipping keys in use (osm_prtn.c generate_pkey). Throws ExportError when `base` has errors.
std::set<std::uint16_t> base_reserved_pkeys(std::string_view base, const std::string& base_name);

// FNV-1a (32 bit) of the name, mapped onto 0x0001..0x7ffe.
std::uint16_t pkey_hash(std::string_view tenant_name);

// P_Key per tenant (same order as `tenants`). Explicit P_Keys are taken first and must be in
// 0x0001..0x7ffe, unique and not in `reserved`; the others start at pkey_hash(name) and probe
// upwards (0x7ffe wraps to 0x0001) past 0x7fff, `reserved` and every P_Key already assigned, in
// input order. Pass tenants in creation order (or persist their P_Keys as explicit ones) so a
// new tenant never moves an existing tenant's P_Key. Throws ExportError.
std::vector<std::uint16_t> assign_pkeys(const std::vector<TenantRecord>& tenants,
                                        const std::set<std::uint16_t>& reserved);

// The whole partitions.conf text. The result is validated before it is returned.
std::string generate_partitions(const std::vector<TenantRecord>& tenants,
                                const PartitionOptions& options);

struct PartitionsDiagnostic {
  int line = 0;  // 1-based
  bool error = true;
  std::string message;
};

struct PartitionEntry {
  std::string name;
  std::optional<std::uint16_t> pkey;  // low 15 bits; nullopt when OpenSM would generate one
  int line = 0;
};

struct PartitionsCheck {
  std::vector<PartitionsDiagnostic> diagnostics;
  std::vector<PartitionEntry> partitions;
  bool ok() const;  // no errors (warnings allowed)
  // "file:line: error: message" lines, one per diagnostic.
  std::string report(std::string_view file) const;
};

// Checks partitions.conf text against the grammar in `man opensm` (PARTITION CONFIGURATION):
// '#' comments; statements "[Name][=PKey][,ipoib|indx0|defmember=..|mgroup flags] : members ;"
// spanning lines; members ALL, ALL_CAS, ALL_SWITCHES, ALL_ROUTERS, SELF or a port GUID, each
// with optional =full|=limited|=both; "mgid=GID[,flags]" multicast groups.
// Also an error, though OpenSM takes it: ALL, ALL_CAS or ALL_SWITCHES as full (or both) members,
// written or by the statement's defmember, as OpenSM reads them ("ALL=f" and "ALL=" are full):
// every tenant host would reach every other, or the switches' management ports.
PartitionsCheck validate_partitions(std::string_view text);

}  // namespace laas::exports

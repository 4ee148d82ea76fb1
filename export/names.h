// Name checks shared by the generators, shell quoting and Slurm host lists.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace laas::exports {

// Throws ExportError(format, subject, ...) unless `value` is 1..max_len characters of
// [A-Za-z0-9._-] (plus the characters in `extra`) starting with a letter, digit or '_'.
// A leading '-' is refused everywhere: every consumer is a command line or a parser that could
// take it for an option. `what` says which name it is ("tenant name", "host name", ...).
void check_name(std::string_view value, std::size_t max_len, const std::string& format,
                const std::string& subject, const std::string& what, std::string_view extra = {});

// The one rule for tenant names, checked by the service when a tenant is created so that every
// exporter can write every tenant it accepted: 1..kMaxTenantName characters of [A-Za-z0-9._-]
// starting with a letter, digit or '_'. The length limit comes from OpenSM: a partition name
// is at most 31 characters (osm_prtn_t::name is char[32]) and tenants' partitions are named
// "laas_" + tenant. Throws ExportError("LaaS", "tenant '<name>'", why).
inline constexpr std::size_t kMaxTenantName = 26;
void check_tenant_name(std::string_view name);

// The host name in a node description: its first word. rdma-ndd writes "%h %d" ("comp-1
// mlx5_0"); ibsim and hand-set descriptions are the bare host name.
std::string host_of_description(std::string_view description);

// Single-quotes `word` for bash unless it is made only of characters that never need quoting.
std::string shell_quote(std::string_view word);

// Looks `name` up in `map`; unmapped names pass through.
std::string mapped(const std::map<std::string, std::string>& map, const std::string& name);

// Slurm hostlist expression: names sharing a prefix and a numeric suffix of the same width
// class are folded into prefix[a-b,c]; groups are joined with ','. Sorted naturally
// (prefix, then number), duplicates dropped. {"comp-1".."comp-10"} -> "comp-[1-10]".
std::string compress_hostlist(std::vector<std::string> names);

}  // namespace laas::exports

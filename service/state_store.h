// Durable tenant state: one JSON file, replaced atomically (write a temporary file, fsync,
// rename, fsync the directory), so a crash leaves either the old or the new state, never half.
// Tenants are stored by GUIDs, never by model indices, so a re-cabled or re-discovered fabric
// maps them back (or reports what vanished) instead of silently re-allocating.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "topology/fabric.h"

namespace laas::service {

struct PersistedLink {
  topology::Guid switch_guid = 0;  // the lower switch of the up-link
  int port = 0;                    // its physical up-port
};

struct PersistedTenant {
  std::string name;
  int requested = 0;
  std::vector<topology::Guid> hosts;  // port GUIDs
  std::vector<PersistedLink> links;
  std::string shape;
  std::uint16_t pkey = 0;  // the tenant's partition key, fixed at creation (0: none yet)
  // Given at creation for the Slurm and OpenStack exports (empty: not given).
  std::vector<std::string> slurm_accounts = {};
  std::vector<std::string> slurm_users = {};
  std::string openstack_project = {};
};

struct PersistedState {
  std::string topology;  // the spec the tenants were placed on
  std::uint64_t generation = 0;
  std::vector<PersistedTenant> tenants;
};

class StateStore {
 public:
  explicit StateStore(std::string directory);

  const std::string& path() const { return path_; }
  // A missing file is an empty state. Throws std::runtime_error naming the file and what is
  // wrong when it exists but cannot be trusted.
  PersistedState load() const;
  // Durable when it returns; throws std::runtime_error (the old state is then intact).
  void save(const PersistedState& state) const;

 private:
  std::string directory_;
  std::string path_;
};

// Replaces `path` with `content` durably: temporary file, fsync, rename, fsync the directory.
// Throws std::runtime_error naming the path.
void write_file_atomically(const std::string& path, const std::string& content, unsigned mode);

std::string guid_hex(topology::Guid guid);
// Parses "0x..." (or bare hex); throws std::invalid_argument.
topology::Guid parse_guid(const std::string& text);

}  // namespace laas::service

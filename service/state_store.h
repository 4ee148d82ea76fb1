// Durable tenant state: one JSON file, replaced atomically (write a temporary file, fsync,
// rename, fsync the directory), so a crash leaves either the old or the new state, never half.
// Tenants are stored by GUIDs, never by model indices, so a re-cabled or re-discovered fabric
// maps them back (or reports what vanished) instead of silently re-allocating.
#pragma once

#include <cstdint>
#include <stdexcept>
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

// The new content is in place (the rename happened) but the directory could not be synced:
// readers see the new file, a crash may bring back the old one.
class NotDurableError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Replaces `path` with `content` durably: temporary file, fsync, rename, fsync the directory.
// Throws NotDurableError when only the last step failed, std::runtime_error (the old file
// intact) otherwise; both name the path.
void write_file_atomically(const std::string& path, const std::string& content, unsigned mode);

// Tests inject storage failures: called instead of fsync(2) (directory: the fsync after the
// rename). nullptr restores fsync.
using FsyncFn = int (*)(int fd, bool directory);
void set_fsync_for_tests(FsyncFn fn);

std::string guid_hex(topology::Guid guid);
// Parses "0x..." (or bare hex); throws std::invalid_argument.
topology::Guid parse_guid(const std::string& text);

}  // namespace laas::service

// Durable tenant state: one JSON file, replaced atomically (write a temporary file, fsync,
// rename, fsync the directory), so a crash leaves either the old or the new state, never half.
// Tenants are stored by physical identities, never by model indices: a host by its
// leaf switch's node GUID and port (plus the port GUID last seen there), a link by its lower
// switch's node GUID and up-port. A missing cable, host or switch therefore never renames
// another, and a re-discovered fabric maps every tenant back, its absent parts included.
//
// Version 2. A version-1 file (hosts by port GUID only) is migrated on load: its hosts are
// located by port GUID at the first recognition and the file is rewritten as version 2; a
// version-1 host absent at that moment cannot be located and its tenant stays unplaced (kept on
// disk, reported) until the host is back.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "service/state_stamp.h"
#include "topology/fabric.h"
#include "util/durable_file.h"

namespace laas::service {

constexpr int kStateVersion = 2;

struct PersistedLink {
  topology::Guid switch_guid = 0;  // the lower switch of the up-link
  int port = 0;                    // its physical up-port
  bool operator==(const PersistedLink& o) const {
    return switch_guid == o.switch_guid && port == o.port;
  }
  bool operator<(const PersistedLink& o) const {
    return switch_guid != o.switch_guid ? switch_guid < o.switch_guid : port < o.port;
  }
};

struct PersistedHost {
  topology::Guid leaf_guid = 0;  // the leaf switch's node GUID (0: not known yet, version 1)
  int port = 0;                  // the leaf's physical port the host is cabled to
  topology::Guid guid = 0;       // the host's port GUID last seen there (0: never seen)
  std::string name{};            // its node description last seen there (for messages)
  bool operator==(const PersistedHost& o) const {
    return leaf_guid == o.leaf_guid && port == o.port && guid == o.guid && name == o.name;
  }
};

struct PersistedRepair {  // see allocator::Repair
  std::vector<PersistedLink> retired;
  std::vector<PersistedLink> added;
  bool operator==(const PersistedRepair& o) const {
    return retired == o.retired && added == o.added;
  }
};

// A host taken out of service by an administrator, by its port GUID: a drained free
// host is never placed; a drained tenant host leaves service when its tenant releases it.
struct PersistedDrain {
  topology::Guid guid = 0;
  std::string name;    // as last seen, for the reader
  std::string reason;  // why (required)
  std::string by;      // who ("uid 0")
  std::string at;      // when (UTC, ISO 8601)
  bool operator==(const PersistedDrain& o) const {
    return guid == o.guid && name == o.name && reason == o.reason && by == o.by && at == o.at;
  }
};

// A link or switch taken out of service by an administrator for maintenance: a link by its
// lower switch's node GUID and up-port (either end names it on the command line), a switch by
// its node GUID (port 0). Never placed; tenants are moved off it as off a fault.
struct PersistedFabricDrain {
  topology::Guid guid = 0;
  int port = 0;
  std::string name;  // as last seen, for the reader
  std::string reason;
  std::string by;
  std::string at;
  bool operator==(const PersistedFabricDrain& o) const {
    return guid == o.guid && port == o.port && name == o.name && reason == o.reason && by == o.by &&
           at == o.at;
  }
};

struct PersistedTenant {
  std::string name;
  int requested = 0;
  std::vector<PersistedHost> hosts;
  std::vector<PersistedLink> links;  // as placed, before any repair
  std::string shape;
  std::uint16_t pkey = 0;  // the tenant's partition key, fixed at creation (0: none yet)
  std::vector<PersistedRepair> repairs{};
  // The shape as the placer described it (leaves q,d,r then pods q,d,r; all 0: not recorded),
  // so a restart describes the tenant exactly as before.
  std::vector<int> shape_numbers{};
  // Given at creation for the Slurm and OpenStack exports (empty: not given).
  std::vector<std::string> slurm_accounts = {};
  std::vector<std::string> slurm_users = {};
  std::string openstack_project = {};
  bool operator==(const PersistedTenant& o) const {
    return name == o.name && requested == o.requested && hosts == o.hosts && links == o.links &&
           shape == o.shape && pkey == o.pkey && repairs == o.repairs &&
           shape_numbers == o.shape_numbers && slurm_accounts == o.slurm_accounts &&
           slurm_users == o.slurm_users && openstack_project == o.openstack_project;
  }
};

struct PersistedState {
  std::string topology;  // the spec the tenants were placed on
  std::uint64_t generation = 0;
  std::vector<PersistedTenant> tenants;
  int loaded_version = 2;  // the version read from disk (1: migrate at the next save)
  // Subnet-manager failover. `term` rises each time an SM takes the state over as
  // master (StateStore::take_over); a writer whose term is older is fenced off. `master` names
  // the SM that holds the current term. `sm_ports`: the port GUIDs of every SM seen (management
  // hosts on every SM, so nothing moves at failover). `management`: the management port GUIDs
  // the master routes with, for the standbys' partitions.conf. All empty/0: a single SM.
  std::uint64_t term = 0;
  std::string master{};
  std::vector<topology::Guid> sm_ports{};
  std::vector<topology::Guid> management{};
  // The rest of what the master's managed partitions.conf holds beyond the tenants, so a
  // standby's is the same file (service/partition_inputs.h): ports routed outside the tree's
  // slots (shared services, an SM host cabled twice), the free hosts of an open free pool, and
  // the recorded tenants the master does not route. Empty in a file written before they were
  // recorded: a standby then writes the tenants and `management` only.
  std::vector<topology::Guid> outside_members{};
  std::vector<topology::Guid> free_pool_members{};
  std::vector<std::string> unrouted_tenants{};
  std::vector<PersistedDrain> drained{};
  std::vector<PersistedFabricDrain> drained_links{};
  std::vector<PersistedFabricDrain> drained_switches{};
  bool operator==(const PersistedState& o) const {
    return topology == o.topology && generation == o.generation && tenants == o.tenants &&
           term == o.term && master == o.master && sm_ports == o.sm_ports &&
           management == o.management && outside_members == o.outside_members &&
           free_pool_members == o.free_pool_members && unrouted_tenants == o.unrouted_tenants &&
           drained == o.drained && drained_links == o.drained_links &&
           drained_switches == o.drained_switches;
  }
};

// The drained links and switches of state.json (service/fabric_drain_state.cc): read from and
// written into the document; a bad entry throws std::invalid_argument saying which.
void parse_fabric_drains(const nlohmann::json& doc, PersistedState& state);
void write_fabric_drains(const PersistedState& state, nlohmann::json& doc);

// The file's text and its parser, without I/O (property tests reload after every operation).
// parse_state throws std::runtime_error saying what is wrong; `where` names the source.
std::string serialize_state(const PersistedState& state);
PersistedState parse_state(const std::string& text, const std::string& where);

FileStamp stamp_of(const std::string& path);

// The modes of everything the plugin creates: the state directory (and any directory it
// makes) and every file in it, and the managed partitions.conf. Readable by the directory's
// group (laas: its members read the state offline), by nobody else -- the state names every
// tenant's hosts, links and P_Keys. Applied to new files whatever OpenSM's umask.
constexpr unsigned kDirMode = 0750;
constexpr unsigned kFileMode = 0640;

class EtcdState;  // service/etcd_state.h

// The parts of the shared state beside the tenant state itself: the tenants last routed (the
// record a master that cannot read the state routes from), the intended tree as recorded, and
// the tenants file's applied list. Each a file of the state directory, or in etcd the key
// PREFIX + name, written by the master with the same fencing as the state.
struct SharedPart {
  const char* name;  // the etcd key's last component
  const char* file;  // the file's name in the state directory
};
inline constexpr SharedPart kSharedParts[] = {{"allocations", "allocations.json"},
                                              {"layout", "layout.json"},
                                              {"tenants_applied", "tenants.yaml.applied"}};
// By name: the parts present (absent ones are not in the map).
using SharedParts = std::map<std::string, std::string>;

// The state directory may be shared by several SM hosts (NFS, DRBD: docs/ha.md). Writers take
// an exclusive lock on state.lock for each read-check-write, so two plugins that both believe
// they are master never interleave, and a state never goes back to an older term or generation.
// With `etcd` the document lives in etcd instead (`state_store: etcd`): the same calls, fenced
// by the leader key (EtcdState), and path() names the key.
class StateStore {
 public:
  explicit StateStore(std::string directory, std::shared_ptr<EtcdState> etcd = nullptr);

  const std::string& path() const { return path_; }
  // The state's version now: stamp_of(path()), or the etcd key's revision.
  FileStamp stamp() const;
  // The etcd store ("": a directory): why etcd does not answer now ("" when it does).
  std::string unavailable() const;
  const std::shared_ptr<EtcdState>& etcd() const { return etcd_; }
  const std::string& lock_path() const { return lock_path_; }
  // A missing file is an empty state. Throws std::runtime_error naming the file and what is
  // wrong when it exists but cannot be trusted.
  PersistedState load() const;
  // Durable when it returns; throws FencedError when the file on disk has a higher term than
  // state.term, or the same term and a higher generation; std::runtime_error otherwise (the
  // old state is then intact either way).
  // Returns the stamp of the file it wrote (taken under the lock).
  FileStamp save(const PersistedState& state) const;
  // An SM becoming master: under the lock, reads the state, raises its term past every earlier
  // master's, records `master` (and `sm_port`, 0: none, among sm_ports) and saves it. Returns
  // the state as saved. Throws std::runtime_error (nothing written) when it cannot be read, or
  // with `missing_refusal` (when not empty) when state.json does not exist -- decided under the
  // lock, where the file is read, so an unmount between a check and the read cannot slip in.
  PersistedState take_over(const std::string& master, topology::Guid sm_port,
                           FileStamp* written = nullptr,
                           const std::string& missing_refusal = "") const;
  // `laasctl state init`: the first, empty state of a new state directory (a share that never
  // held one, where state_must_exist keeps every SM from taking a missing file over). Under the
  // lock; creates the directory when missing (kDirMode, setgid, group `group` when it exists),
  // writes state.json (kFileMode, the directory's group). Throws std::runtime_error, writing
  // nothing, when state.json exists, or when allocations.json or tables.bin say tenants were
  // routed from this directory (then state.json is lost, not new: restore it). Returns what
  // it did, one line.
  std::string init(const std::string& group) const;
  // `laasctl state migrate`: writes `state` as it is (its term and generation kept), and
  // `parts` (those it lacks removed from here), where this store holds no state. Throws
  // std::runtime_error, writing nothing, when it holds one.
  void create(const PersistedState& state, const SharedParts& parts = {}) const;

  // The parts (kSharedParts) as this store holds them. In etcd read together from a quorum;
  // while it does not answer and `or_followed`, as the watch last brought them. Throws
  // StoreUnavailableError (etcd) or std::runtime_error (a file that exists and cannot be read).
  SharedParts read_parts(bool or_followed = false) const;
  // Replaces one part (`name` of kSharedParts): the file atomically, or the etcd key fenced as
  // save() is (FencedError when another SM took the state over).
  void write_part(const std::string& name, const std::string& text) const;
  // Where a part lives, for messages: "/var/lib/laas/layout.json", "etcd:/laas/layout".
  std::string part_path(const std::string& name) const;

 private:
  std::string directory_;
  std::string path_;
  std::string lock_path_;
  std::shared_ptr<EtcdState> etcd_;
};

// `laasctl state migrate`: copies the state `from` holds into `to`, which must hold none (or
// the same state: nothing to do). Returns what it did, one line; throws std::runtime_error
// naming both, writing nothing, otherwise.
std::string migrate_state(const StateStore& from, const StateStore& to);

// Durable writes are util/durable_file.h's, named here for the service's callers.
using util::FsyncFn;
using util::NotDurableError;
using util::replace_file;
using util::set_fsync_for_tests;
using util::write_file_atomically;

// A file's whole text; `exists` (may be null) says whether it could be opened ("" if not).
std::string read_text(const std::string& path, bool* exists);
// Its two halves, for a writer that decides late whether the new content stands: stage_file
// writes and syncs `path`.tmp (std::runtime_error, nothing left behind, when it cannot);
// publish_staged_file renames it over `path` and syncs the directory (errors as above);
// discard_staged_file removes it.
void stage_file(const std::string& path, const std::string& content, unsigned mode);
void publish_staged_file(const std::string& path);
void discard_staged_file(const std::string& path);

std::string guid_hex(topology::Guid guid);
// Parses "0x..." (or bare hex); throws std::invalid_argument.
topology::Guid parse_guid(const std::string& text);

}  // namespace laas::service

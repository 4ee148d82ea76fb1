// The shared state's parts besides the tenant state (the service's) -- layout.json, the intended
// tree, and allocations.json, the tenants last routed: files of the state directory, or keys
// under etcd's prefix with `state_store: etcd` (service::StateStore::read_parts, write_part;
// tables.bin stays local: core/last_tables.h). Read on the state directory's worker at start
// and when this SM takes the state over (another SM may have written them since), together
// with the tenants file's applied list; written on the worker after the routing runs that
// change them, never waited for inside a run (which may hold the SM's lock):
// Controller::on_routing_done waits for them, briefly.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "core/config.h"
#include "core/tenants.h"
#include "service/tenant_service.h"
#include "topology/layout.h"

namespace laas::core {

class StateFiles {
 public:
  // `config` and `service` outlive this object (the Controller holds all three).
  StateFiles(service::TenantService& service, service::Logger log);

  // layout.json, allocations.json and the tenants file's applied list, read on the worker
  // within `deadline`: the applied list, or nullopt when the directory (etcd) does not answer
  // (memory kept, nothing written over what could not be read; read again while unread()).
  std::optional<std::set<std::string>> read(std::chrono::milliseconds deadline);
  bool unread() const { return unread_; }

  std::string layout_file() const { return service_.store().part_path("layout"); }
  // layout.json as last read or recorded (null: none). The routing thread replaces it while
  // audits read it on socket threads: each reader holds its own reference for as long as it
  // uses it, so a replaced layout lives on until its last reader is done.
  std::shared_ptr<const topology::Layout> layout() const;
  // layout.json could not be read: it is never written over.
  bool layout_unreadable() const { return layout_unreadable_; }
  // Why layout.json could not be read, once (logged at the next routing run).
  std::string take_layout_error();
  // The last layout.json write failed: true once, for the run that writes it again.
  bool take_layout_retry() { return writes_->layout_failed.exchange(false); }
  // Recorded in memory now (the run recognizes with it), on disk by the worker; `why` is
  // logged once written ("": nothing to say, as for a retry).
  void record_layout(topology::Layout now, const std::string& why);

  // allocations.json as last read (at start or a take-over): the "last routed" record on disk,
  // kept in memory so that no routing run reads it. Routing thread only.
  const std::optional<Allocations>& disk_allocations() const { return disk_allocations_; }
  const std::string& disk_allocations_error() const { return disk_allocations_error_; }
  // Serialized and written on the worker, only when the text differs from what the file
  // holds; a failed write is made again by the next run.
  void queue_allocations(const Allocations& alloc);

  // Waits at most `timeout` for the writes queued so far; not at all while the directory does
  // not answer. False: some are not written yet.
  bool wait_for_writes(std::chrono::milliseconds timeout);

 private:
  struct Files;  // what read() brings back from the worker
  void adopt(Files files);
  void set_layout(std::shared_ptr<const topology::Layout> layout);
  std::uint64_t queue_write();  // the number of the next queued write

  service::TenantService& service_;
  service::Logger log_;
  bool unread_ = false;             // the directory did not answer: read at the next run
  bool layout_unreadable_ = false;  // never overwrite a file we could not read
  std::string layout_error_;
  std::optional<Allocations> disk_allocations_;
  std::string disk_allocations_error_;  // why it could not be read ("": it could, or none)
  mutable std::mutex mu_;               // guards layout_
  std::shared_ptr<const topology::Layout> layout_;
  // The writes queued on the worker: how many were queued and done, and whether the last
  // layout.json write failed. Shared with the queued operations, which may outlive this object.
  struct Writes {
    std::mutex mu;
    std::condition_variable cv;
    std::uint64_t queued = 0, done = 0;
    std::atomic<bool> layout_failed{false};
    std::string allocations_text;  // what allocations.json holds (the worker's)
    void finish(std::uint64_t n);  // the write queued as number n is done (or failed)
  };
  std::shared_ptr<Writes> writes_ = std::make_shared<Writes>();
};

}  // namespace laas::core

// What both stores of the shared state (service/state_store.h: a directory; service/etcd_state.h:
// etcd) say of a write: the version of what they hold, and a write refused by fencing. Apart, so
// that etcd's store needs nothing of the directory's.
#pragma once

#include <stdexcept>

namespace laas::service {

// A file's identity and version as stat(2) sees it: a file replaced by rename gets a new one.
// In etcd (service/etcd_state.h), the key's mod_revision is its version (`revision`).
struct FileStamp {
  bool exists = false;
  long long mtime_ns = 0;
  long long size = 0;
  unsigned long long inode = 0;
  long long revision = 0;
  bool operator==(const FileStamp& o) const {
    return exists == o.exists && mtime_ns == o.mtime_ns && size == o.size && inode == o.inode &&
           revision == o.revision;
  }
  bool operator!=(const FileStamp& o) const { return !(*this == o); }
};

// A save refused because another SM took the state over (a higher term on disk) or wrote a
// newer generation: this writer's view is stale and nothing was written.
class FencedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace laas::service

#include "core/last_tables.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>

#include "service/state_store.h"
#include "util/durable_file.h"

namespace laas::core {

struct LastTables::Shared {
  std::mutex mu;
  std::size_t written_hash = 0;  // of what the file holds (0: unknown)
};

namespace {

std::string errno_text() { return std::strerror(errno); }

// A descriptor closed on every path.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// state.lock, as StateStore takes it for every read-check-write of state.json: a take-over
// never interleaves with the check of the term and the rename. Waited for 10 s at most.
struct StateLock {
  Fd f;
  explicit StateLock(const std::string& path) {
    f.fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0640);
    if (f.fd < 0) throw std::runtime_error("cannot open " + path + ": " + errno_text());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (::flock(f.fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      if ((err != EWOULDBLOCK && err != EINTR) || std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error("cannot lock " + path + ": " +
                                 (err == EWOULDBLOCK ? "held for 10 s" : std::strerror(err)));
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
};

// Runs `act` under state.lock unless state.json names a term newer than `term` (then returns
// why, and `act` is not run). Term 0 (no shared state) is not fenced.
std::string fenced(const std::string& state_dir, std::uint64_t term,
                   const std::function<void()>& act) {
  if (term == 0) {
    act();
    return "";
  }
  const service::StateStore store(state_dir);
  const StateLock lock(store.lock_path());
  const service::PersistedState disk = store.load();
  if (disk.term > term)
    return "SM " + disk.master + " took the state over (term " + std::to_string(disk.term) +
           ") after this SM's term " + std::to_string(term);
  act();
  return "";
}

// Publishes `tmp` as `path` unless a newer term fences it off (then `tmp` goes, and why is
// returned).
std::string publish_fenced(const std::string& tmp, const std::string& path,
                           const std::string& state_dir, std::uint64_t term) {
  std::string why;
  try {
    why = fenced(state_dir, term, [&] { util::publish_durably(tmp, path); });
  } catch (...) {
    ::unlink(tmp.c_str());  // gone already unless the fence itself failed
    throw;
  }
  if (!why.empty()) ::unlink(tmp.c_str());
  return why;
}

// After a failed write: the older file goes, fenced like a write (a newer master's file
// stays). What happened, for the log.
std::string remove_older(const std::string& path, const std::string& state_dir,
                         std::uint64_t term) {
  try {
    bool removed = false;
    const std::string why = fenced(state_dir, term, [&] {
      removed = ::unlink(path.c_str()) == 0 || errno == ENOENT;
      if (!removed) throw std::runtime_error(errno_text());
    });
    if (!why.empty()) return "the file stays: " + why;
    return "the older file is removed (a start failing closed gets no tables it cannot vouch for)";
  } catch (const std::exception& e) {
    return std::string("the older file could not be removed either (") + e.what() + ")";
  }
}

}  // namespace

LastTables::LastTables(service::StateIo& io, std::string path, std::string state_dir,
                       service::Logger log, std::shared_ptr<service::TablesFileHealth> health)
    : io_(io),
      path_(std::move(path)),
      state_dir_(std::move(state_dir)),
      log_(std::move(log)),
      shared_(std::make_shared<Shared>()),
      health_(std::move(health)) {}

namespace {

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

// On the worker: `encode(stamp)` written as the file under `term`, fenced; skipped when
// `skip_same` and the bytes (without the write time) equal what this process last wrote.
void LastTables::write(const Target& t, std::uint64_t term, const Encoder& encode, bool skip_same) {
  try {
    const std::string bytes = encode(routing::SavedStamp{term, unix_now()});
    // The same tables under the same term and owners are not written again (the write time
    // left out of the comparison).
    const std::size_t hash = routing::saved_tables_content_hash(bytes);
    {
      std::lock_guard<std::mutex> lock(t.shared->mu);
      if (skip_same && hash == t.shared->written_hash) return;
      t.shared->written_hash = 0;  // unknown until written
    }
    ::mkdir(t.dir.c_str(), service::kDirMode);
    const std::string fenced =
        publish_fenced(util::stage_durably(t.path, bytes, service::kFileMode), t.path, t.dir, term);
    if (!fenced.empty()) {
      t.log(service::LogLevel::kError, "laas: the tables sent are not kept in " + t.path + ": " +
                                           fenced + "; the new master's stand");
      return;
    }
    std::lock_guard<std::mutex> lock(t.shared->mu);
    t.shared->written_hash = skip_same ? hash : 0;
    if (t.health) {
      std::lock_guard<std::mutex> health_lock(t.health->mu);
      t.health->last_error.clear();
    }
  } catch (const std::exception& e) {
    // An older file would give a start that fails closed tables the switches no longer hold:
    // it goes (when the directory lets it and no newer master wrote it).
    // Replaced but not synced: the new file is in place, only a crash could bring the old back.
    const bool in_place = dynamic_cast<const service::NotDurableError*>(&e) != nullptr;
    const std::string line =
        "cannot keep the tables sent in " + t.path + ": " + e.what() + "; " +
        (in_place ? std::string("the new file is in place") : remove_older(t.path, t.dir, term));
    t.log(service::LogLevel::kError,
          "laas: " + line + "; written again after the next routing run");
    if (t.health) {
      t.health->write_failures.fetch_add(1);
      std::lock_guard<std::mutex> health_lock(t.health->mu);
      t.health->last_error = line;
    }
  }
}

void LastTables::save(std::uint64_t term, routing::LidOwners lids,
                      std::vector<topology::Guid> switch_guids,
                      std::vector<std::vector<std::uint8_t>> tables,
                      std::shared_ptr<const routing::Sl2VlTables> sl2vl) {
  auto job = [target = target(), term, lids = std::move(lids), guids = std::move(switch_guids),
              tables = std::move(tables), sl2vl = std::move(sl2vl)] {
    write(
        target, term,
        [&](const routing::SavedStamp& stamp) {
          return routing::encode_saved_tables(stamp, lids, guids, tables,
                                              sl2vl ? *sl2vl : routing::Sl2VlTables());
        },
        /*skip_same=*/true);
  };
  // A newer run's tables replace a write still queued: a hung directory holds one at most.
  io_.post("last-tables", std::move(job));
}

void LastTables::save_given_back(std::uint64_t term,
                                 std::shared_ptr<const routing::SavedTables> given) {
  auto job = [target = target(), term, given = std::move(given)] {
    write(
        target, term,
        [&](const routing::SavedStamp& stamp) {
          routing::SavedTables copy = *given;
          copy.stamp = stamp;
          return routing::encode_saved_tables(copy);
        },
        /*skip_same=*/false);
  };
  io_.post("last-tables", std::move(job));
}

std::shared_ptr<const routing::SavedTables> LastTables::load(std::string* why) const {
  try {
    return io_.call(
        [path = path_]() -> std::shared_ptr<const routing::SavedTables> {
          bool exists = false;
          const std::string bytes = service::read_text(path, &exists);
          if (!exists) throw std::runtime_error("there is none");
          return std::make_shared<const routing::SavedTables>(routing::decode_saved_tables(bytes));
        },
        service::kIoDeadline);
  } catch (const std::exception& e) {
    *why = path_ + ": " + e.what();
    return nullptr;
  }
}

}  // namespace laas::core

#include "opensm_plugin/last_tables.h"

#include <sys/stat.h>

#include <functional>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "service/state_store.h"

namespace laas::plugin {

struct LastTables::Shared {
  std::mutex mu;
  std::size_t written_hash = 0;  // of what the file holds (0: unknown)
};

LastTables::LastTables(service::StateIo& io, std::string path, service::Logger log)
    : io_(io), path_(std::move(path)), log_(std::move(log)), shared_(std::make_shared<Shared>()) {}

void LastTables::save(std::vector<topology::Guid> switch_guids,
                      std::vector<std::vector<std::uint8_t>> tables,
                      std::shared_ptr<const routing::Sl2VlTables> sl2vl) {
  auto job = [guids = std::move(switch_guids), tables = std::move(tables), sl2vl = std::move(sl2vl),
              path = path_, shared = shared_, log = log_] {
    try {
      const std::string bytes =
          routing::encode_saved_tables(guids, tables, sl2vl ? *sl2vl : routing::Sl2VlTables());
      const std::size_t hash = std::hash<std::string>()(bytes);
      {
        std::lock_guard<std::mutex> lock(shared->mu);
        if (hash == shared->written_hash) return;
        shared->written_hash = 0;  // unknown until written
      }
      const auto slash = path.rfind('/');
      if (slash != std::string::npos) ::mkdir(path.substr(0, slash).c_str(), 0755);
      service::write_file_atomically(path, bytes, 0644);
      std::lock_guard<std::mutex> lock(shared->mu);
      shared->written_hash = hash;
    } catch (const std::exception& e) {
      log(service::LogLevel::kError, "laas: cannot keep the tables sent in " + path + ": " +
                                         e.what() + "; written again after the next routing run");
    }
  };
  // A newer run's tables replace a write still queued: a hung directory holds one at most.
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

}  // namespace laas::plugin

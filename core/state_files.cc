#include "core/state_files.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "core/tenants_file.h"
#include "service/service_state.h"
#include "service/state_store.h"

namespace laas::core {

struct StateFiles::Files {
  std::optional<std::string> layout;
  std::optional<Allocations> allocations;
  std::string allocations_error;
  std::set<std::string> applied;
};

namespace {

// Runs on the state directory's worker: the parts as the store holds them (in etcd, as the
// watch last brought them while etcd does not answer: a new master without a quorum routes
// closed from the tenants its standby followed, not from a record of its own last term).
template <class Files>
Files read_now(const service::StateStore& store) {
  Files f;
  service::SharedParts parts;
  try {
    parts = store.read_parts(/*or_followed=*/true);
  } catch (const service::NotAnsweringError&) {
    throw;
  } catch (const std::exception& e) {
    f.allocations_error = e.what();
    return f;
  }
  if (auto it = parts.find("layout"); it != parts.end()) f.layout = std::move(it->second);
  if (auto it = parts.find("allocations"); it != parts.end()) try {
      f.allocations = allocations_from_json(it->second);
    } catch (const std::exception& e) {
      f.allocations_error = store.part_path("allocations") + ": " + e.what();
    }
  if (auto it = parts.find("tenants_applied"); it != parts.end())
    f.applied = parse_applied(it->second);
  return f;
}

}  // namespace

StateFiles::StateFiles(service::TenantService& service, service::Logger log)
    : service_(service), log_(std::move(log)) {}

std::optional<std::set<std::string>> StateFiles::read(std::chrono::milliseconds deadline) {
  Files files;
  try {
    files =
        service_.io().call([store = service_.store()] { return read_now<Files>(store); }, deadline);
  } catch (const service::NotAnsweringError& e) {
    // Never write over what could not be read; read again at the first run it answers.
    unread_ = true;
    layout_unreadable_ = true;
    log_(service::LogLevel::kError,
         std::string("laas: ") + e.what() +
             ": the layout, the tenants last routed and the tenants file's applied list are read "
             "when it answers");
    return std::nullopt;
  }
  std::set<std::string> applied = std::move(files.applied);
  adopt(std::move(files));
  return applied;
}

void StateFiles::adopt(Files files) {
  unread_ = false;
  {
    std::lock_guard<std::mutex> lock(writes_->mu);
    writes_->allocations_text.clear();  // another SM may have written allocations.json since
  }
  std::shared_ptr<const topology::Layout> layout;
  layout_unreadable_ = false;
  if (files.layout) {
    try {
      layout = std::make_shared<const topology::Layout>(topology::parse_layout(*files.layout));
    } catch (const std::exception& e) {
      layout_unreadable_ = true;
      layout_error_ = layout_file() + ": " + e.what() +
                      "; recognizing from laas.yaml or the cabling, the file is left as it is";
    }
  }
  // allocations.json is only an output; state.json is the state.
  disk_allocations_ = std::move(files.allocations);
  disk_allocations_error_ = files.allocations_error;
  set_layout(std::move(layout));
}

std::string StateFiles::take_layout_error() {
  std::string error;
  error.swap(layout_error_);
  return error;
}

std::shared_ptr<const topology::Layout> StateFiles::layout() const {
  std::lock_guard<std::mutex> lock(mu_);
  return layout_;
}

void StateFiles::set_layout(std::shared_ptr<const topology::Layout> layout) {
  std::lock_guard<std::mutex> lock(mu_);
  layout_ = std::move(layout);
}

std::uint64_t StateFiles::queue_write() {
  std::lock_guard<std::mutex> lock(writes_->mu);
  return ++writes_->queued;
}

void StateFiles::Writes::finish(std::uint64_t n) {
  {
    std::lock_guard<std::mutex> lock(mu);
    done = std::max(done, n);
  }
  cv.notify_all();
}

// A newer record replaces one still queued.
void StateFiles::queue_allocations(const Allocations& alloc) {
  const std::uint64_t n = queue_write();
  service_.io().post(
      "allocations.json", [alloc, n, writes = writes_, log = log_, store = service_.store()] {
        try {
          std::string text = to_json(alloc);
          bool same;
          {
            std::lock_guard<std::mutex> lock(writes->mu);
            same = text == writes->allocations_text;
            writes->allocations_text.clear();  // unknown until written
          }
          if (!same) store.write_part("allocations", text);
          std::lock_guard<std::mutex> lock(writes->mu);
          writes->allocations_text = std::move(text);
        } catch (const std::exception& e) {
          log(service::LogLevel::kError,
              std::string("laas: cannot write allocations: ") + e.what() + "; written again later");
        }
        writes->finish(n);
      });
}

void StateFiles::record_layout(topology::Layout now, const std::string& why) {
  const std::uint64_t n = queue_write();
  service_.io().post("layout.json", [n, writes = writes_, log = log_, why, store = service_.store(),
                                     text = topology::layout_to_json(now)] {
    try {
      store.write_part("layout", text);
      writes->layout_failed = false;
      if (!why.empty()) log(service::LogLevel::kInfo, "laas: " + why);
    } catch (const std::exception& e) {
      writes->layout_failed = true;
      log(service::LogLevel::kError, std::string("laas: cannot record the layout: ") + e.what() +
                                         "; recorded again at the next routing run");
    }
    writes->finish(n);
  });
  set_layout(std::make_shared<const topology::Layout>(std::move(now)));
}

bool StateFiles::wait_for_writes(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(writes_->mu);
  const std::uint64_t target = writes_->queued;
  if (writes_->done >= target) return true;
  if (!service_.io().not_answering().empty()) return false;
  return writes_->cv.wait_for(lock, timeout, [&] { return writes_->done >= target; });
}

}  // namespace laas::core

#include "topology/recognition_cache.h"

#include <utility>

namespace laas::topology {

Recognition RecognitionCache::recognize(const Fabric& fabric, RecognizeOptions options,
                                        std::shared_ptr<const Layout> layout, bool* reused) {
  options.layout = layout.get();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (last_ && last_->layout == layout && last_->sm_port_guid == options.sm_port_guid &&
        last_->set_aside_loops == options.set_aside_loops && last_->declared == options.declared &&
        last_->fabric == fabric) {
      if (reused) *reused = true;
      return last_->result;
    }
  }
  if (reused) *reused = false;
  // Outside the lock: a second caller with other inputs recognizes in parallel; the last to
  // finish is kept.
  Recognition result = topology::recognize(fabric, options);
  std::lock_guard<std::mutex> lock(mu_);
  last_ = Entry{
      fabric, options.sm_port_guid, options.declared, options.set_aside_loops, std::move(layout),
      result};
  return result;
}

}  // namespace laas::topology

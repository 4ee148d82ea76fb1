// The last recognition and what it was made of. A tenant change re-routes a fabric whose
// cabling, names and LIDs are those of the run before, with the same recorded layout, declared
// spec and SM port: recognition (a fabric-wide search, tens of ms at thousands of switches)
// would find the same tree and embedding, so the run takes the last one back instead.
// recognize() is a pure function of those inputs, which is all that makes this correct.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "topology/fabric.h"
#include "topology/layout.h"
#include "topology/recognize.h"

namespace laas::topology {

class RecognitionCache {
 public:
  // recognize(fabric, options) with options.layout = layout.get(), or the last result when
  // every input equals the last call's. The layout is compared by identity (a recorded layout
  // is never changed in place, a new record is a new object) and kept alive for that.
  // `reused` (optional) says which. Safe from several threads (the routing run and an audit).
  Recognition recognize(const Fabric& fabric, RecognizeOptions options,
                        std::shared_ptr<const Layout> layout, bool* reused = nullptr);

 private:
  struct Entry {
    Fabric fabric;
    Guid sm_port_guid = 0;
    std::string declared;
    bool set_aside_loops = false;
    std::shared_ptr<const Layout> layout;
    Recognition result;
  };
  std::mutex mu_;
  std::optional<Entry> last_;
};

}  // namespace laas::topology

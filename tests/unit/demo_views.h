// The service's view of a model fabric (the paper's demo tree by default), for the service's
// unit tests: no OpenSM, no ibsim.
#pragma once

#include <memory>
#include <string>

#include "service/caller.h"
#include "service/topology_view.h"
#include "topology/embedding.h"

namespace laas::test {

inline std::shared_ptr<const service::TopologyView> demo_view(
    const std::string& spec = "xgft(2;4,8;1,4)") {
  auto tree = topology::FatTree::parse(spec);
  auto [fabric, emb] = topology::build_model_fabric(tree);
  return std::make_shared<service::TopologyView>(tree, fabric, emb);
}

// The two callers the service's tests ask as: root, who may change tenants and hosts, and
// an unprivileged user, who may only read.
inline const service::Caller kAdmin{0, true};
inline const service::Caller kReader{1000, false};

}  // namespace laas::test

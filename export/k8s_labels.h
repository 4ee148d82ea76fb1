// Kubernetes: Node label patches, one a server, so that pods can be placed by tenant (its
// servers carry the tenant's name and P_Key) and by the fabric's topology -- the levels that
// Kueue's topology-aware scheduling reads from node labels (a Topology object lists them):
// pod (the spine group a leaf belongs to), rail group (the leaves that serve the same servers on
// a rail-optimized tree; on one-port servers, the leaf), leaf.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "export/records.h"

namespace laas::exports {

// One Kubernetes node: a server and where it sits.
struct K8sNode {
  std::string name;        // the server's name, the node's name (kubelet's hostname)
  Guid leaf = 0;           // the leaf switch of its first port (rail 0)
  int pod = 0;             // its leaf's pod (a 2-level tree is one pod)
  int rail_group = 0;      // its leaf's rail group
  std::string tenant;      // empty: free
  std::uint16_t pkey = 0;  // the tenant's P_Key (0: none)
};

struct K8sOptions {
  std::string prefix = "laas.io";     // the labels' DNS-subdomain prefix: <prefix>/tenant, ...
  std::string leaf_prefix = "ibsw-";  // a leaf's label value: <leaf_prefix><16 hex digits>
};

// The label keys, by what they say.
struct K8sLabelKeys {
  std::string tenant, pkey, pod, rail_group, leaf;
};
K8sLabelKeys k8s_label_keys(const K8sOptions& options);

// Kubernetes' rules (apimachinery's validation): "" when `key` is a valid label key (a
// qualified name: [DNS subdomain of at most 253 characters "/"] name of at most 63), else
// what is wrong; the same for a label value (at most 63, empty allowed) and a node's name
// (a DNS subdomain: lower case, digits, '-', '.').
std::string k8s_label_key_problem(const std::string& key);
std::string k8s_label_value_problem(const std::string& value);
std::string k8s_node_name_problem(const std::string& name);

// A JSON document {"apiVersion": "v1", "kind": "List", "items": [...]} with one item a node,
// {"apiVersion": "v1", "kind": "Node", "metadata": {"name", "labels"}}: each item is a merge
// patch for `kubectl patch node NAME --type merge -p ITEM`. A free node's tenant and P_Key
// labels are null (the patch removes them). Throws ExportError naming the node or tenant whose
// name is no valid label value or node name.
std::string generate_k8s_labels(const std::vector<K8sNode>& nodes, const K8sOptions& options);

}  // namespace laas::exports

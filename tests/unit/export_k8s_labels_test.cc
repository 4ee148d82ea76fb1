// Kubernetes Node label patches (export/k8s_labels.h): Kubernetes' label rules, a free node's
// tenant labels removed, a bad name refused naming its node or tenant. The golden file is also
// what tests/export/k8s_labels_check.py checks against Kubernetes' rules (exports.k8s_labels_*).
//
// Regenerate after an intended change: LAAS_UPDATE_GOLDEN=1 ./laas_unit_tests
// --gtest_filter='K8sLabels*', then review the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "export/k8s_labels.h"

namespace laas::exports {
namespace {

std::string golden_path() {
#ifdef LAAS_GOLDEN_DIR
  return std::string(LAAS_GOLDEN_DIR) + "/export/k8s-labels.json";
#else
  std::string f = __FILE__;
  return f.substr(0, f.find_last_of('/')) + "/../golden/export/k8s-labels.json";
#endif
}

std::vector<K8sNode> demo_nodes() {
  return {{"comp-1", 0x0002c90300000101, 0, 0, "bank", 0x8001},
          {"comp-2", 0x0002c90300000101, 0, 0, "bank", 0x8001},
          {"gpu017", 0x0002c90300000102, 1, 3, "", 0}};
}

}  // namespace

TEST(K8sLabels, KubernetesRulesForKeysValuesAndNodeNames) {
  EXPECT_EQ(k8s_label_key_problem("laas.io/tenant"), "");
  EXPECT_EQ(k8s_label_key_problem("tenant"), "");
  EXPECT_NE(k8s_label_key_problem("LAAS.io/tenant"), "");      // prefix: lower case only
  EXPECT_NE(k8s_label_key_problem("laas.io/"), "");            // no name
  EXPECT_NE(k8s_label_key_problem("laas.io/-tenant"), "");     // must start alphanumeric
  EXPECT_NE(k8s_label_key_problem(std::string(64, 'a')), "");  // name at most 63
  EXPECT_EQ(k8s_label_key_problem(std::string(63, 'a')), "");
  EXPECT_EQ(k8s_label_value_problem(""), "");
  EXPECT_EQ(k8s_label_value_problem("Bank_2.x"), "");
  EXPECT_NE(k8s_label_value_problem("_bank"), "");
  EXPECT_NE(k8s_label_value_problem("bank."), "");
  EXPECT_NE(k8s_label_value_problem("bank\n"), "");
  EXPECT_NE(k8s_label_value_problem(std::string(64, 'b')), "");
  EXPECT_EQ(k8s_node_name_problem("gpu017.cluster"), "");
  EXPECT_NE(k8s_node_name_problem("GPU017"), "");
  EXPECT_NE(k8s_node_name_problem("gpu_017"), "");
}

TEST(K8sLabels, OnePatchANodeWithItsTenantAndPlaceAndFreeNodesCleared) {
  const std::string text = generate_k8s_labels(demo_nodes(), {});
  const auto doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc["kind"], "List");
  ASSERT_EQ(doc["items"].size(), 3u);
  const auto& bank = doc["items"][0];
  EXPECT_EQ(bank["kind"], "Node");
  EXPECT_EQ(bank["metadata"]["name"], "comp-1");
  const auto& labels = bank["metadata"]["labels"];
  EXPECT_EQ(labels["laas.io/tenant"], "bank");
  EXPECT_EQ(labels["laas.io/pkey"], "0x8001");
  EXPECT_EQ(labels["laas.io/leaf"], "ibsw-0002c90300000101");
  EXPECT_EQ(labels["laas.io/pod"], "pod-0");
  EXPECT_EQ(labels["laas.io/rail-group"], "rg-0");
  const auto& free = doc["items"][2]["metadata"]["labels"];
  EXPECT_TRUE(free["laas.io/tenant"].is_null());  // the merge patch removes it
  EXPECT_TRUE(free["laas.io/pkey"].is_null());
  EXPECT_EQ(free["laas.io/pod"], "pod-1");
  EXPECT_EQ(free["laas.io/rail-group"], "rg-3");
  if (const char* u = std::getenv("LAAS_UPDATE_GOLDEN"); u && std::string(u) == "1")
    std::ofstream(golden_path(), std::ios::binary) << text;
  std::ifstream in(golden_path(), std::ios::binary);
  std::ostringstream golden;
  golden << in.rdbuf();
  EXPECT_EQ(golden.str(), text) << "golden file " << golden_path() << " differs";
}

TEST(K8sLabels, ANameKubernetesRefusesIsRefusedNamingIt) {
  auto nodes = demo_nodes();
  nodes[0].tenant = "_bank";  // a valid tenant name, no valid label value
  try {
    generate_k8s_labels(nodes, {});
    FAIL() << "a tenant name Kubernetes refuses was exported";
  } catch (const ExportError& e) {
    EXPECT_NE(std::string(e.what()).find("tenant '_bank'"), std::string::npos) << e.what();
  }
  nodes = demo_nodes();
  nodes[2].name = "GPU017";
  EXPECT_THROW(generate_k8s_labels(nodes, {}), ExportError);
  nodes = demo_nodes();
  nodes[1].name = "comp-1";
  EXPECT_THROW(generate_k8s_labels(nodes, {}), ExportError);
  K8sOptions bad;
  bad.prefix = "LaaS.io";
  EXPECT_THROW(generate_k8s_labels(demo_nodes(), bad), ExportError);
}

}  // namespace laas::exports

#include "export/k8s_labels.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

namespace laas::exports {

using nlohmann::json;

namespace {

constexpr const char* kK8sLabelsFormat = "Kubernetes labels";
constexpr std::size_t kMaxName = 63;        // a label's name and value
constexpr std::size_t kMaxSubdomain = 253;  // a key's prefix, a node's name

// apimachinery's qualifiedNameFmt and dns1123SubdomainFmt.
const std::regex& name_re() {
  static const std::regex re("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");
  return re;
}
const std::regex& subdomain_re() {
  static const std::regex re("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  return re;
}

std::string subdomain_problem(const std::string& s, const std::string& what) {
  if (s.empty()) return what + " is empty";
  if (s.size() > kMaxSubdomain)
    return what + " is " + std::to_string(s.size()) + " characters long (at most 253)";
  if (!std::regex_match(s, subdomain_re()))
    return what + " '" + s +
           "' is no DNS subdomain (lower-case letters, digits, '-' and '.', starting and ending "
           "with a letter or digit)";
  return "";
}

std::string label_name_problem(const std::string& s, const std::string& what) {
  if (s.size() > kMaxName)
    return what + " '" + s + "' is " + std::to_string(s.size()) + " characters long (at most 63)";
  if (!std::regex_match(s, name_re()))
    return what + " '" + s +
           "' may use only letters, digits, '-', '_' and '.', and must start and end with a "
           "letter or digit";
  return "";
}

std::string pkey_text(std::uint16_t pkey) {
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%04x", pkey);
  return hex;
}

// A label's value, or ExportError naming whose it is.
json value(const std::string& v, const std::string& subject) {
  if (const auto problem = k8s_label_value_problem(v); !problem.empty())
    throw ExportError(kK8sLabelsFormat, subject, problem);
  return v;
}

}  // namespace

K8sLabelKeys k8s_label_keys(const K8sOptions& o) {
  const std::string p = o.prefix + "/";
  return {p + "tenant", p + "pkey", p + "pod", p + "rail-group", p + "leaf"};
}

std::string k8s_label_key_problem(const std::string& key) {
  const auto slash = key.find('/');
  std::string name = key;
  if (slash != std::string::npos) {
    if (const auto p = subdomain_problem(key.substr(0, slash), "the key's prefix"); !p.empty())
      return p;
    name = key.substr(slash + 1);
  }
  if (name.empty()) return "the key '" + key + "' has no name";
  return label_name_problem(name, "the key's name");
}

std::string k8s_label_value_problem(const std::string& v) {
  return v.empty() ? "" : label_name_problem(v, "the value");
}

std::string k8s_node_name_problem(const std::string& name) {
  return subdomain_problem(name, "the node name");
}

std::string generate_k8s_labels(const std::vector<K8sNode>& nodes, const K8sOptions& options) {
  const auto keys = k8s_label_keys(options);
  for (const auto* k : {&keys.tenant, &keys.pkey, &keys.pod, &keys.rail_group, &keys.leaf})
    if (const auto problem = k8s_label_key_problem(*k); !problem.empty())
      throw ExportError(kK8sLabelsFormat, "option prefix", problem);
  json items = json::array();
  std::set<std::string> seen;
  for (const auto& n : nodes) {
    const std::string subject = "node '" + n.name + "'";
    if (const auto problem = k8s_node_name_problem(n.name); !problem.empty())
      throw ExportError(kK8sLabelsFormat, subject, problem);
    if (!seen.insert(n.name).second) throw ExportError(kK8sLabelsFormat, subject, "listed twice");
    json labels = {{keys.pod, value("pod-" + std::to_string(n.pod), subject)},
                   {keys.rail_group, value("rg-" + std::to_string(n.rail_group), subject)},
                   {keys.leaf, value(options.leaf_prefix + guid_hex(n.leaf).substr(2), subject)},
                   {keys.tenant, nullptr},
                   {keys.pkey, nullptr}};
    if (!n.tenant.empty()) {
      labels[keys.tenant] = value(n.tenant, subject + " tenant '" + n.tenant + "'");
      if (n.pkey) labels[keys.pkey] = pkey_text(n.pkey);
    }
    items.push_back({{"apiVersion", "v1"},
                     {"kind", "Node"},
                     {"metadata", {{"name", n.name}, {"labels", std::move(labels)}}}});
  }
  return json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", std::move(items)}}.dump(2) + "\n";
}

}  // namespace laas::exports

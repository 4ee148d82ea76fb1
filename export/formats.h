// The export formats, in one table: `laasctl export` offers and describes them from it, the
// service's export request dispatches and lists them from it.
#pragma once

#include <array>
#include <string>
#include <vector>

namespace laas::exports {

struct Format {
  const char* name;
  const char* what;  // for help texts
  bool per_server;   // one entry a server (schedulers), not one a host port
};

inline constexpr std::array<Format, 7> kFormats{{
    {"partitions", "OpenSM partitions.conf", false},
    {"routing-chains", "NVIDIA OpenSM/UFM policy files", false},
    {"slurm", "reservation commands", true},
    {"slurm-topology", "topology.conf", false},
    {"slurm-partitions", "slurm.conf include, a partition per tenant", true},
    {"openstack", "aggregate commands", true},
    {"k8s-labels", "Kubernetes Node label patches", true},
}};

inline const Format* find_format(const std::string& name) {
  for (const auto& f : kFormats)
    if (name == f.name) return &f;
  return nullptr;
}

inline std::vector<std::string> format_names() {
  std::vector<std::string> out;
  for (const auto& f : kFormats) out.emplace_back(f.name);
  return out;
}

// "partitions (OpenSM partitions.conf), routing-chains (...), ..." or, without `what`, the names.
inline std::string formats_text(bool what) {
  std::string out;
  for (const auto& f : kFormats)
    out += (out.empty() ? "" : ", ") + std::string(f.name) +
           (what ? std::string(" (") + f.what + ")" : "");
  return out;
}

}  // namespace laas::exports

#include "sdn/discovery.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <sstream>

#include "sdn/reload.h"
#include "topology/ibnetdiscover.h"

namespace laas::sdn {

namespace {

std::string joined_command(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

int hops(const std::string& route) {
  return static_cast<int>(std::count(route.begin(), route.end(), ','));
}

}  // namespace

std::string find_program(const std::string& name, const std::string& path_env) {
  if (name.find('/') != std::string::npos) return name;
  std::istringstream dirs(path_env + ":/usr/sbin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return name;
}

std::string ibnetdiscover_problem(const std::string& program, const std::string& path_env,
                                  std::chrono::milliseconds timeout, std::string* found,
                                  std::string* said) {
  const std::string name = program.empty() ? "ibnetdiscover" : program;
  *found = find_program(name, path_env);
  if (found->find('/') == std::string::npos)
    return "sdn.ibnetdiscover: '" + name + "' is not on PATH (" + path_env +
           ") nor in /usr/sbin: install infiniband-diags, or name its path in sdn.ibnetdiscover";
  const ReloadResult r = run_command({*found, "--version"}, timeout);
  const std::string stderr_line = last_line(r.err);
  if (!r.ok())
    return "sdn.ibnetdiscover: '" + *found + " --version' failed: " + r.error +
           (stderr_line.empty() ? "" : "; stderr: " + stderr_line);
  // infiniband-diags print their version on standard error.
  *said = stderr_line.empty() ? last_line(r.out) : stderr_line;
  return "";
}

std::vector<std::string> ibnetdiscover_argv(const DiscoverOptions& o) {
  const char* path = std::getenv("PATH");
  std::vector<std::string> argv{
      find_program(o.program.empty() ? "ibnetdiscover" : o.program, path ? path : "")};
  if (!o.ca.empty()) argv.insert(argv.end(), {"-C", o.ca});
  if (o.port > 0) argv.insert(argv.end(), {"-P", std::to_string(o.port)});
  return argv;
}

topology::Fabric discover_fabric(const std::vector<std::string>& argv,
                                 std::chrono::milliseconds timeout) {
  const ReloadResult r = run_command(argv, timeout);
  const std::string said = last_line(r.err);
  const std::string command = "'" + joined_command(argv) + "'";
  if (!r.ok())
    throw DiscoveryError("discovery " + command + " failed: " + r.error +
                         (said.empty() ? "" : "; stderr: " + said));
  if (r.out_cut)
    throw DiscoveryError("discovery " + command + ": output larger than " +
                         std::to_string(kMaxOutput) + " bytes");
  std::istringstream in(r.out);
  try {
    return topology::read_ibnetdiscover(in, command);
  } catch (const topology::ParseError& e) {
    throw DiscoveryError(std::string("discovery: ") + e.what() +
                         (said.empty() ? "" : "; stderr: " + said));
  }
}

topology::Fabric discover_fabric(const DiscoverOptions& options) {
  return discover_fabric(ibnetdiscover_argv(options), options.timeout);
}

int local_node(const topology::Fabric& fabric, const LocalPort& local) {
  for (std::size_t n = 0; n < fabric.nodes.size(); ++n) {
    const auto& node = fabric.nodes[n];
    if (node.is_switch != local.is_switch) continue;
    if (node.is_switch && node.guid == local.node_guid) return static_cast<int>(n);
    if (!node.is_switch && local.number > 0 && local.number < static_cast<int>(node.ports.size()) &&
        node.ports[local.number].guid == local.port_guid)
      return static_cast<int>(n);
  }
  return -1;
}

std::map<topology::Guid, std::string> switch_routes(const topology::Fabric& fabric,
                                                    const LocalPort& local) {
  std::map<topology::Guid, std::string> routes;
  std::deque<int> queue;
  auto reach = [&](int node, const std::string& route) {
    if (node < 0 || !fabric.nodes[node].is_switch || hops(route) > 63) return;
    if (routes.emplace(fabric.nodes[node].guid, route).second) queue.push_back(node);
  };
  const int start = local_node(fabric, local);
  if (start < 0) return routes;
  if (local.is_switch) {
    reach(start, "0");
  } else {
    // An adapter forwards nothing: its own cable only.
    const auto& port = fabric.nodes[start].ports[local.number];
    reach(port.peer_node, "0," + std::to_string(local.number));
  }
  while (!queue.empty()) {
    const int s = queue.front();
    queue.pop_front();
    const std::string route = routes[fabric.nodes[s].guid];
    const auto& ports = fabric.nodes[s].ports;
    for (std::size_t p = 1; p < ports.size(); ++p)
      reach(ports[p].peer_node, route + "," + std::to_string(p));
  }
  return routes;
}

}  // namespace laas::sdn

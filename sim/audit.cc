#include "sim/audit.h"

#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "check/checker.h"
#include "topology/servers.h"

namespace laas::sim {

namespace {
struct Held {
  std::vector<int> hosts, links;
};
}  // namespace

std::optional<LogHeader> parse_log_header(const std::string& line) {
  if (line.rfind("# laas-sim log", 0) != 0) return std::nullopt;
  LogHeader h;
  // Words "key=value" after the marker; unknown keys are for readers of later versions.
  std::istringstream words(line.substr(14));
  std::string word;
  while (words >> word) {
    const auto eq = word.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = word.substr(0, eq), value = word.substr(eq + 1);
    if (key == "topology") h.topology = value;
    if (key == "isolated") h.isolated = value != "0";
    if (key == "rails") {
      try {
        std::size_t used = 0;
        h.rails = std::stoi(value, &used);
        if (used != value.size() || h.rails < 1) throw std::invalid_argument(value);
      } catch (const std::exception&) {
        h.rails = 1;
        h.rails_error = "rails=" + value + " is not a positive whole number";
      }
    }
  }
  return h;
}

std::string logged_topology(std::istream& in) {
  std::string line;
  while (std::getline(in, line))
    if (auto header = parse_log_header(line)) return header->topology;
  return "";
}

AuditReport audit_log(const topology::FatTree& tree, std::istream& in, const std::string& name,
                      int check_every, int max_problems) {
  AuditReport rep;
  bool isolated = true;
  std::vector<int> leaf_rail;  // from the header's rails=R (laas-sim --rails)
  std::map<long long, Held> live;
  std::string line;
  int lineno = 0;
  long tx = 0;
  auto problem = [&](const std::string& what) {
    if (static_cast<int>(rep.problems.size()) < max_problems) {
      rep.problems.push_back(name + ":" + std::to_string(lineno) + ": " + what);
    }
  };
  auto check_now = [&] {
    std::vector<check::TenantView> views;
    for (auto& [id, h] : live) {
      views.push_back({std::to_string(id), h.hosts, h.links, isolated});
      if (!leaf_rail.empty()) views.back().leaf_rail = &leaf_rail;
    }
    for (auto& v : check::check_all(tree, views, {})) problem(check::to_string(v));
  };
  while (std::getline(in, line)) {
    ++lineno;
    if (auto header = parse_log_header(line)) {
      isolated = header->isolated;
      if (!header->rails_error.empty()) problem("header: " + header->rails_error);
      if (header->rails > 1) {
        try {
          leaf_rail = topology::rail_of_leaf(tree, topology::rail_servers(tree, header->rails));
        } catch (const std::exception& e) {
          problem(std::string("header: rails: ") + e.what());
        }
      }
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    std::string op, kw1, kw2, time;
    long long id = 0;
    int req = 0;
    size_t nh = 0, nl = 0;
    Held h;
    bool ok = static_cast<bool>(ss >> op >> time >> id >> req >> kw1 >> nh) && kw1 == "hosts";
    if (ok) {
      h.hosts.resize(nh);
      for (auto& x : h.hosts) ok = ok && static_cast<bool>(ss >> x);
      ok = ok && static_cast<bool>(ss >> kw2 >> nl) && kw2 == "links";
      h.links.resize(nl);
      for (auto& x : h.links) ok = ok && static_cast<bool>(ss >> x);
    }
    if (!ok || (op != "ADD" && op != "REM")) {
      problem("malformed log line");
      continue;
    }
    for (int x : h.hosts) {
      if (x < 0 || x >= tree.num_hosts()) ok = false;
    }
    for (int x : h.links) {
      if (x < 0 || x >= tree.total_links()) ok = false;
    }
    if (!ok) {
      problem("host or link id outside the tree");
      continue;
    }
    ++tx;
    if (op == "ADD") {
      ++rep.adds;
      for (int l : h.links) (tree.link_level(l) == 1 ? rep.l1_added : rep.l2_added)++;
      if (static_cast<int>(h.hosts.size()) < req)
        problem("tenant holds fewer hosts than requested");
      if (!live.emplace(id, h).second) problem("ADD of a tenant already present");
      if (isolated) {
        check::TenantView view{std::to_string(id), h.hosts, h.links};
        if (!leaf_rail.empty()) view.leaf_rail = &leaf_rail;
        for (auto& v : check::check_tenant_shape(tree, view)) problem(check::to_string(v));
      }
    } else {
      ++rep.removes;
      auto it = live.find(id);
      if (it == live.end()) {
        problem("REM of an unknown tenant");
      } else {
        if (it->second.hosts != h.hosts || it->second.links != h.links) {
          problem("REM does not return exactly what was added");
        }
        live.erase(it);
      }
    }
    if (check_every > 0 && tx % check_every == 0) check_now();
  }
  check_now();
  return rep;
}

}  // namespace laas::sim

// laas-plan: run tenant requests against the allocator offline, without OpenSM — to try a tree,
// rehearse a sequence of requests, or show the paper's walkthrough.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <sstream>

#include "laasctl/render.h"
#include "util/cli_parse.h"

using namespace laas;

namespace {

std::string describe(const topology::FatTree& tree, const allocator::Tenant& t) {
  std::ostringstream out;
  out << "  hosts:";
  for (auto h : t.placement.hosts) out << " " << tree.host_name(h);
  out << "\n  links:";
  if (t.placement.links.empty()) out << " none (one leaf)";
  for (auto l : t.placement.links) {
    const auto lo = tree.link_lower(l);
    out << " " << tree.switch_name(lo.level, lo.index) << ":" << lo.port;
  }
  out << "\n  shape: " << t.placement.shape.text() << "\n";
  return out.str();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Run tenant requests against the LaaS allocator offline (no fabric is touched).\n"
      "Each STEP is 'add NAME HOSTS', 'remove NAME', 'show NAME', 'list' or 'map'.",
      "laas-plan"};
  std::string spec = "xgft(2;4,8;1,4)";
  std::string algorithm = "laas";
  std::vector<std::string> steps;
  bool color = isatty(1);
  app.add_option("-t,--topology", spec, "fat-tree spec")->capture_default_str();
  app.add_option("-a,--algorithm", algorithm, "laas, simple or unconstrained")
      ->capture_default_str();
  // Two flags: CLI11 prints "--color,!--no-color" as "--no-color{false}", read as the default.
  app.add_flag("--color", color, "colour the allocation map (the default on a terminal)");
  app.add_flag_callback(
      "--no-color", [&color] { color = false; }, "no colours (the default in a pipe)");
  app.add_option("STEP", steps, "requests, in order")->required();
  if (const int rc = laas::util::parse_command_line(app, argc, argv); rc >= 0) return rc;

  std::unique_ptr<topology::FatTree> tree;
  std::unique_ptr<allocator::Cluster> cluster;
  try {
    tree = std::make_unique<topology::FatTree>(topology::FatTree::parse(spec));
    cluster = std::make_unique<allocator::Cluster>(*tree, allocator::make_placer(algorithm));
  } catch (const std::exception& e) {
    std::cerr << "laas-plan: " << e.what() << "\n";
    return 2;
  }
  int exit_code = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    std::istringstream words(steps[i]);
    std::string verb, name, extra;
    int hosts = 0;
    words >> verb;
    std::cout << "$ " << steps[i] << "\n";
    if (verb == "add" && (words >> name >> hosts) && !(words >> extra)) {
      auto r = cluster->add(name, hosts);
      std::cout << (r.ok() ? "ok: " : "refused: ") << r.message << "\n";
      if (r.ok()) std::cout << describe(*tree, *r.tenant);
      if (!r.ok()) exit_code = 1;
    } else if (verb == "remove" && (words >> name) && !(words >> extra)) {
      auto r = cluster->remove(name);
      std::cout << (r.ok() ? "ok: " : "error: ") << r.message << "\n";
      if (!r.ok()) exit_code = 1;
    } else if (verb == "show" && (words >> name) && !(words >> extra)) {
      const auto* t = cluster->find(name);
      if (t)
        std::cout << "tenant '" << name << "' (" << t->requested << " hosts requested)\n"
                  << describe(*tree, *t);
      else
        std::cout << "error: no tenant named '" << name << "'\n";
    } else if (verb == "list" && !(words >> extra)) {
      for (const auto& [n, t] : cluster->tenants())
        std::cout << "  " << n << ": " << t.placement.hosts.size() << " hosts, "
                  << t.placement.links.size() << " links, " << t.placement.shape.text() << "\n";
    } else if (verb == "map" && !(words >> extra)) {
      std::cout << ctl::render_allocation_map(ctl::map_from_cluster(*cluster), color);
    } else {
      std::cerr << "laas-plan: step " << i + 1 << " '" << steps[i]
                << "' is not 'add NAME HOSTS', 'remove NAME', 'show NAME', 'list' or 'map'\n";
      return 2;
    }
    std::cout << "\n";
  }
  return exit_code;
}

// laas-sdn: the LaaS tenant service for an OpenSM-family SM that does not load the plugin
// (NVIDIA's OpenSM, UFM, a plain upstream OpenSM): the same control socket and laasctl, with a
// fabric side of its own (sdn/daemon.h). Runs in the foreground (systemd: Type=simple), logs to
// standard error; SIGTERM and SIGINT stop it, SIGHUP asks for a routing run.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>

#include "core/config.h"
#include "sdn/daemon.h"
#include "sdn/discovery.h"
#include "service/socket_server.h"
#include "util/cli_parse.h"

using namespace laas;

namespace {

std::mutex log_mu;

void log_line(service::LogLevel level, const std::string& line) {
  // sd-daemon(3) priorities: the journal keeps the level.
  const char* prefix = level == service::LogLevel::kError     ? "<3>"
                       : level == service::LogLevel::kWarning ? "<4>"
                                                              : "<6>";
  std::lock_guard<std::mutex> lock(log_mu);
  std::cerr << prefix << line << "\n" << std::flush;
}

// Checks that only laas-sdn makes: its section complete, laas.yaml otherwise valid.
int check_config(const core::Config& config, const std::string& path) {
  auto problems = config.problems;
  for (const auto& p : core::sdn_problems(config)) problems.push_back(path + ": " + p);
  for (const auto& p : problems) std::cerr << "laas-sdn: " << p << "\n";
  return problems.empty() ? 0 : 2;
}

// --check only: discovery's ibnetdiscover found and started (--version: no fabric read), so a
// missing or broken one is named before the first routing run fails on it.
int check_discovery(const core::Config& config) {
  const char* path = std::getenv("PATH");
  std::string found, said;
  const std::string problem = sdn::ibnetdiscover_problem(config.sdn.ibnetdiscover, path ? path : "",
                                                         std::chrono::seconds(10), &found, &said);
  if (!problem.empty()) {
    std::cerr << "laas-sdn: " << problem << "\n";
    return 2;
  }
  std::cout << "laas-sdn: discovery runs " << found << " (" << said << ")\n";
  return 0;
}

int serve(const core::Config& config) {
  // Blocked in every thread (they inherit the mask); waited for here.
  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&signals, s);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  sdn::SdnDaemon daemon(config, log_line);
  if (const auto w = sdn::shared_leaf_warning(config); !w.empty())
    log_line(service::LogLevel::kWarning, "laas-sdn: " + w);
  log_line(service::LogLevel::kInfo, "laas-sdn: master of its own state directory " +
                                         config.state_dir + " (no SM election); writing " +
                                         config.sdn.lfts_file + " and " +
                                         config.sdn.partitions_file + ", whole_leaves " +
                                         (config.whole_leaves.value_or(true) ? "on" : "off"));
  std::unique_ptr<service::SocketServer> socket;
  if (!config.socket.empty()) {
    service::SocketConfig sc;
    sc.path = config.socket;
    sc.group = config.socket_group;
    sc.read_group = config.socket_read_group;
    socket = std::make_unique<service::SocketServer>(sc, daemon.controller().service(), log_line);
    socket->start();  // throws naming the path: nothing to serve without it
  }
  daemon.start();
  for (;;) {
    int sig = 0;
    if (sigwait(&signals, &sig) != 0) continue;
    if (sig == SIGHUP) {
      daemon.request_run("SIGHUP");
      continue;
    }
    log_line(service::LogLevel::kInfo, std::string("laas-sdn: stopping (") + strsignal(sig) + ")");
    break;
  }
  if (socket) socket->stop();
  daemon.stop();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "laas-sdn: the LaaS tenant service for a subnet manager without the plugin. Discovers the "
      "fabric, computes isolating forwarding tables, writes the SM's lfts_file and partition "
      "file, reloads the SM and reads the tables back; serves laasctl's control socket.",
      "laas-sdn"};
  std::string path;
  bool check_only = false;
  app.add_option("--config", path, "laas.yaml with an sdn: section")->required();
  app.add_flag("--check", check_only, "check the configuration and exit (0: usable)");
  if (const int rc = util::parse_command_line(app, argc, argv); rc >= 0) return rc;
  try {
    const auto config = core::check_config(path);
    if (const int rc = check_config(config, path); rc != 0) return rc;
    if (check_only) return check_discovery(config);
    return serve(config);
  } catch (const std::exception& e) {
    std::cerr << "laas-sdn: " << e.what() << "\n";
    return 1;
  }
}

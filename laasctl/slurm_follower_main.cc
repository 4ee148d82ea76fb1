// laas-slurm: keeps Slurm following the LaaS tenants (laasctl/slurm_follower.h). A daemon
// (systemd: laas-slurm.service) on the host where slurmctld reads its configuration and the
// LaaS control socket is reachable (the SM host).
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "export/output.h"
#include "laasctl/client.h"
#include "laasctl/slurm_follower.h"
#include "sdn/reload.h"
#include "util/cli_parse.h"
#include "util/text.h"

using namespace laas;

namespace {

// The journal gets one line per change of state: a service that stays unreachable is said
// once, not every second.
ctl::SlurmFollower::Log deduplicated_log() {
  auto last = std::make_shared<std::string>();
  return [last](const std::string& line) {
    if (line == *last) return;
    *last = line;
    std::cerr << line << std::endl;
  };
}

ctl::SlurmFollower::Read file_reader() {
  return [](const std::string& path) -> std::optional<std::string> {
    std::string text;
    if (util::read_whole_file(path, &text) != 0) return std::nullopt;
    return text;
  };
}

ctl::SlurmFollower::Run command_runner(int timeout_s) {
  return [timeout_s](const std::vector<std::string>& argv) -> std::string {
    const auto r = sdn::run_reload(argv, std::chrono::seconds(timeout_s));
    return r.ok() ? std::string() : r.summary(argv);
  };
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "laas-slurm: keep Slurm's topology.conf and one partition per LaaS tenant (a slurm.conf\n"
      "include file) following the tenants, and have slurmctld re-read them at each change.",
      "laas-slurm"};
  std::string socket = service::kDefaultSocketPath;
  if (const char* env = std::getenv("LAAS_SOCKET")) socket = env;
  ctl::FollowerConfig config;
  std::string reconfigure = "scontrol reconfigure";
  bool once = false;
  int timeout_s = 60;
  app.add_option("-s,--socket", socket, "the LaaS control socket (env LAAS_SOCKET)")
      ->capture_default_str();
  app.add_option("--topology", config.topology_file, "topology.conf to keep current")
      ->capture_default_str();
  app.add_option("--partitions", config.partitions_file,
                 "the slurm.conf include file of the tenants' partitions")
      ->capture_default_str();
  app.add_option("--reconfigure", reconfigure,
                 "run after a file changed: split at spaces, no shell; \"\" for none")
      ->capture_default_str();
  app.add_option("--timeout", timeout_s, "seconds a request or the reconfigure may take")
      ->capture_default_str()
      ->check(CLI::Range(5, 3600));
  app.add_flag("--once", once, "bring the files up to date once and exit (0 done, 1 not)");
  if (const int rc = util::parse_command_line(app, argc, argv); rc >= 0) return rc;
  config.reconfigure = ctl::split_argv(reconfigure);
  config.wait_ms = std::max(0, std::min(25000, timeout_s * 1000 - 5000));

  ctl::SlurmFollower follower(
      config,
      [&socket, timeout_s](const std::string& method, const nlohmann::json& params) {
        return ctl::call(socket, method, params, timeout_s * 1000);
      },
      file_reader(),
      [](const std::string& path, const std::string& text) {
        exports::write_output_file(path, text);
      },
      command_runner(timeout_s), deduplicated_log());
  if (once) return follower.refresh() ? 0 : 1;
  std::cerr << "laas-slurm: following " << socket << " into " << config.topology_file << " and "
            << config.partitions_file << std::endl;
  for (;;)
    if (!follower.step()) std::this_thread::sleep_for(std::chrono::seconds(1));
}

#include "sdn/daemon.h"

#include <cinttypes>
#include <cstdio>
#include <ctime>

#include "sdn/discovery.h"
#include "sdn/lfts_file.h"
#include "sdn/mad_port.h"
#include "util/text.h"

namespace laas::sdn {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

std::string read_or_empty(const std::string& path) {
  std::string text;
  return util::read_whole_file(path, &text) == 0 ? text : std::string();
}

}  // namespace

SdnDaemon::SdnDaemon(core::Config config, service::Logger log)
    : config_(std::move(config)), log_(std::move(log)) {
  if (!config_.whole_leaves) config_.whole_leaves = true;
  // The service keeps the SM's partition file itself (written atomically at each change).
  config_.manage_partitions = true;
  config_.managed_partitions_file = config_.sdn.partitions_file;
  controller_ = std::make_unique<core::Controller>(config_, log_);
  core::AdapterHooks hooks;
  hooks.reroute = [this] { request_run("tenants changed"); };
  hooks.partitions_changed = [this] {
    // Inside a run (the first view writes the file) the run reads it anyway.
    if (!ticker_.on_ticker_thread()) request_run("partitions changed");
  };
  hooks.status = [this] {
    std::lock_guard<std::mutex> lock(mu_);
    return report_json(config_, report_);
  };
  hooks.metrics = [this] {
    std::lock_guard<std::mutex> lock(mu_);
    return report_metrics(config_, report_);
  };
  controller_->connect(std::move(hooks));
}

SdnDaemon::~SdnDaemon() { stop(); }

void SdnDaemon::start() {
  last_run_ = Clock::now();
  ticker_.start(std::chrono::seconds(1), [this] { tick(); });
  ticker_.wake();  // the first run, at once
}

void SdnDaemon::stop() { ticker_.stop(); }

void SdnDaemon::request_run(const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!wanted_) why_ = why;
    wanted_ = true;
  }
  ticker_.wake();
}

// A tick a second: the state directory probed, tenants.yaml looked at; a run when one is
// wanted or the discover interval has passed since the last.
void SdnDaemon::tick() {
  controller_->service().probe_state_dir();
  if (config_.tenants_poll_ms > 0 && controller_->claim_tenants_change())
    request_run("tenants file changed");
  const auto interval = std::chrono::seconds(config_.sdn.discover_interval_s);
  std::string why;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!wanted_ && (interval.count() == 0 || Clock::now() - last_run_ < interval)) return;
    why = wanted_ ? why_ : "discover interval";
    wanted_ = false;
  }
  log_(service::LogLevel::kInfo, "laas-sdn: routing run (" + why + ")");
  run_once();
  last_run_ = Clock::now();
}

MadPort& SdnDaemon::port() {
  if (!port_) {
    port_ = std::make_unique<MadPort>(MadPortOptions{config_.sdn.ca, config_.sdn.port, 0, 4});
    long opens = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      opens = ++report_.mad_port_opens;
    }
    log_(service::LogLevel::kInfo,
         "laas-sdn: opened the MAD port " + port_->describe() + " (open " + std::to_string(opens) +
             "; kept open for the master SM's LID and the read-back; discovery runs " +
             "ibnetdiscover as a child, with ports of its own)");
  }
  return *port_;
}

void SdnDaemon::reopen_port(const std::string& why) {
  log_(service::LogLevel::kError,
       "laas-sdn: the MAD port stopped answering (" + why + "); closing and reopening it");
  port_.reset();
}

core::FabricSnapshot SdnDaemon::discover(std::map<topology::Guid, std::string>* paths) {
  // The local port's own PortInfo first: a port that does not answer even that is reopened
  // once. The SM whose LIDs these are: the master SM LID the local port knows.
  core::FabricSnapshot snap;
  unsigned sm_lid = 0;
  MadPort& opened = port();  // throws when it cannot be opened: the next run tries again
  try {
    sm_lid = opened.master_sm_lid(&snap.lmc);
  } catch (const std::runtime_error& e) {
    reopen_port(e.what());
    sm_lid = port().master_sm_lid(&snap.lmc);
  }
  const LocalPort local = port().local();
  // The fabric by ibnetdiscover, a child process: the MAD ports it opens end with it.
  DiscoverOptions options;
  options.program = config_.sdn.ibnetdiscover;
  options.ca = config_.sdn.ca;
  options.port = config_.sdn.port;
  options.timeout = std::chrono::seconds(config_.sdn.discover_timeout_s);
  snap.fabric = discover_fabric(options);
  snap.with_sl2vl = false;  // the file engine sets no SL2VL
  *paths = switch_routes(snap.fabric, local);
  const int self = local_node(snap.fabric, local);
  if (self < 0)
    log_(service::LogLevel::kWarning,
         "laas-sdn: discovery: this host's port is not in the fabric ibnetdiscover printed");
  snap.sm_port_guid = self < 0 ? local.port_guid : snap.fabric.nodes[self].port_guid;
  for (std::size_t n = 0; n < snap.fabric.nodes.size(); ++n)
    if (sm_lid != 0 && snap.fabric.lid_of(static_cast<int>(n)) == sm_lid)
      snap.sm_port_guid = snap.fabric.nodes[n].port_guid;
  snap.sm_ports = {snap.sm_port_guid};
  return snap;
}

// The lfts_file rewritten when its text differs from what is on disk; whether either file
// differs from what the SM was last told to read.
bool SdnDaemon::write_files(const topology::Fabric& fabric, const core::RouteOutcome& out,
                            std::string* text, bool* partitions_changed) {
  *text = lfts_text(fabric, out.tables);
  if (read_or_empty(config_.sdn.lfts_file) != *text) {
    write_lfts_file(config_.sdn.lfts_file, fabric, out.tables);
    std::lock_guard<std::mutex> lock(mu_);
    ++report_.files_written;
  }
  const std::string partitions = read_or_empty(config_.sdn.partitions_file);
  *partitions_changed = reloaded_partitions_ != partitions;
  return reloaded_lfts_ != *text;
}

std::string SdnDaemon::reload() {
  const auto r = run_reload(config_.sdn.reload, std::chrono::seconds(config_.sdn.reload_timeout_s));
  const std::string line = r.summary(config_.sdn.reload);
  log_(r.ok() ? service::LogLevel::kInfo : service::LogLevel::kError, "laas-sdn: " + line);
  std::lock_guard<std::mutex> lock(mu_);
  ++report_.reloads;
  report_.reload_failures += !r.ok();
  report_.last_reload = line;
  return r.ok() ? "" : line;
}

// The changed switches read back until they hold what was written or readback_timeout passes
// (the SM applies the files in the sweep the reload started).
BlockCheck SdnDaemon::read_back(const topology::Fabric& fabric, const routing::LidTables& tables,
                                const std::vector<int>& changed,
                                const std::map<topology::Guid, std::string>& paths,
                                std::string* error) {
  const auto deadline = Clock::now() + std::chrono::seconds(config_.sdn.readback_timeout_s);
  auto& reader = port();
  for (;;) {
    BlockCheck check;
    error->clear();
    for (int n : changed) {
      const auto& node = fabric.nodes[n];
      const auto path = paths.find(node.guid);
      try {
        if (path == paths.end()) throw std::runtime_error("not found by discovery");
        compare_blocks(node.name, tables[n], reader.read(path->second, tables[n].size() - 1),
                       check);
      } catch (const std::exception& e) {
        ++check.switches;
        ++check.switches_differing;
        *error = node.name + ": " + e.what();
      }
    }
    if (check.applied() || Clock::now() >= deadline) return check;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

// One run's outcome, into the report at its end.
struct SdnDaemon::Run {
  Clock::time_point t0 = Clock::now();
  core::FabricSnapshot snap;
  std::map<topology::Guid, std::string> paths;  // switch GUID -> directed route
  std::string error, fail_closed, readback_error;
  bool lfts_changed = false, partitions_changed = false;
  std::optional<BlockCheck> check;
  double readback_seconds = 0;
};

void SdnDaemon::run_once() {
  Run run;
  try {
    run.snap = discover(&run.paths);
    auto out = controller_->route(run.snap);
    for (const auto& line : out.info) log_(service::LogLevel::kInfo, "laas-sdn: " + line);
    for (const auto& line : out.warnings) log_(service::LogLevel::kWarning, "laas-sdn: " + line);
    if (!out.ok) throw std::runtime_error("not routed: " + out.error);
    if (out.keep_switch_tables) {
      // Nothing computed: the SM keeps reading the file as it is.
      run.fail_closed = out.fail_closed + "; the files are left as they are";
      log_(service::LogLevel::kError, "laas-sdn: failing closed: " + run.fail_closed);
      controller_->on_routing_done();
    } else {
      controller_->on_routing_done(apply(out, run));
    }
  } catch (const std::exception& e) {
    run.error = e.what();
    log_(service::LogLevel::kError,
         std::string("laas-sdn: run failed: ") + run.error + "; the files are left as they are");
  }
  note(run);
}

// The run's tables to the SM: the files written where they changed, the SM reloaded, the
// switches read back. Returns what failed ("" when the switches hold what was written).
std::string SdnDaemon::apply(const core::RouteOutcome& out, Run& run) {
  const auto& fabric = run.snap.fabric;
  std::string text;
  run.lfts_changed = write_files(fabric, out, &text, &run.partitions_changed);
  // The switches did not hold the last file: the SM is told again, same file or not.
  bool retry = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    retry = report_.readback && !report_.readback->applied();
  }
  if (!run.lfts_changed && !run.partitions_changed && !retry) return "";
  const auto changed = changed_switches(fabric, out.tables, retry ? decltype(sent_){} : sent_);
  BlockCheck moved;  // blocks that differ from the previous file, for the metrics
  for (int n : changed) {
    const auto it = sent_.find(fabric.nodes[n].guid);
    compare_blocks("", out.tables[n], it == sent_.end() ? routing::LidTable{} : it->second, moved,
                   0);
  }
  std::string failure = reload();
  reloaded_lfts_ = text;
  reloaded_partitions_ = read_or_empty(config_.sdn.partitions_file);
  for (std::size_t n = 0; n < out.tables.size(); ++n)
    if (!out.tables[n].empty()) sent_[fabric.nodes[n].guid] = out.tables[n];
  if (failure.empty() && config_.sdn.readback_timeout_s > 0)
    failure = check_applied(out.tables, changed, run);
  controller_->record_routing_run(std::chrono::duration<double>(Clock::now() - run.t0).count(),
                                  moved.blocks_differing);
  return failure;
}

std::string SdnDaemon::check_applied(const routing::LidTables& tables,
                                     const std::vector<int>& changed, Run& run) {
  const auto t_read = Clock::now();
  run.check = read_back(run.snap.fabric, tables, changed, run.paths, &run.readback_error);
  run.readback_seconds = std::chrono::duration<double>(Clock::now() - t_read).count();
  const auto& c = *run.check;
  std::string failure;
  if (!c.applied())
    failure = "the SM did not apply the tables: " + std::to_string(c.blocks_differing) + " of " +
              std::to_string(c.blocks) + " LFT blocks differ on " +
              std::to_string(c.switches_differing) + " switch(es) after " +
              std::to_string(config_.sdn.readback_timeout_s) + " s" +
              (run.readback_error.empty() ? "" : " (" + run.readback_error + ")");
  char line[200];
  std::snprintf(line, sizeof line,
                "read back %d switch(es), %ld LFT block(s) in %.1f s: %ld differ", c.switches,
                c.blocks, run.readback_seconds, c.blocks_differing);
  log_(c.applied() ? service::LogLevel::kInfo : service::LogLevel::kError,
       std::string("laas-sdn: ") + line + (failure.empty() ? "" : "; " + failure));
  return failure;
}

void SdnDaemon::note(const Run& run) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& r = report_;
  ++r.runs;
  r.run_failures += !run.error.empty();
  r.last_error = run.error;
  r.fail_closed = run.fail_closed;
  r.last_run_seconds = std::chrono::duration<double>(Clock::now() - run.t0).count();
  r.last_run_unix = static_cast<long>(std::time(nullptr));
  r.lfts_changed = run.lfts_changed;
  r.partitions_changed = run.partitions_changed;
  r.sm_port_guid = run.snap.sm_port_guid;
  r.fabric_nodes = static_cast<int>(run.snap.fabric.nodes.size());
  if (run.check) {
    r.readback = run.check;
    r.readback_seconds = run.readback_seconds;
    r.readback_error = run.readback_error;
  }
}

}  // namespace laas::sdn

#include "opensm_plugin/background_threads.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>

namespace laas::plugin {
namespace {

// Every tick: refreshes what this SM knows of the subnet managers, probes the state directory,
// and, while it is not the master, follows the shared tenant state (managed partitions.conf). With
// tenants_poll_ms > 0 it also watches tenants.yaml and asks OpenSM for a re-route when it changed.
void watch(Plugin* plugin) {
  const int poll = plugin->engine->config().tenants_poll_ms;
  const int period = poll > 0 ? std::min(poll, 1000) : 1000;
  std::unique_lock<std::mutex> lock(plugin->mu);
  while (!plugin->stopping) {
    plugin->cv.wait_for(lock, std::chrono::milliseconds(period));
    if (plugin->stopping) break;
    lock.unlock();
    plugin->sms->note_state();
    plugin->sms->refresh();
    // Who is master, checked at every look: OpenSM hands the fabric to an SM that outranks
    // ours in its election before any routing run could notice.
    plugin->engine->service().note_fabric_sms(plugin->sms->role(), plugin->sms->seen());
    // A look at state.json on the state directory's worker: another SM's write is seen by the
    // next routing run, and a directory that stopped answering is noticed (status, metrics,
    // changes refused) even when nothing else touches it.
    plugin->engine->service().probe_state_dir();
    plugin->engine->service().follow_shared_state();
    lock.lock();
    if (plugin->stopping) break;
    if (poll > 0 && plugin->engine->claim_tenants_change()) {
      log_line(plugin->osm, OSM_LOG_INFO, "tenants file changed; requesting a re-route");
      request_reroute(plugin->osm);
    }
  }
}

}  // namespace

// The control socket; without it OpenSM and the routing go on (tenants.yaml still works).
void start_socket(Plugin* plugin, const core::Config& config) {
  if (config.socket.empty()) return;
  laas::service::SocketConfig sc;
  sc.path = config.socket;
  sc.group = config.socket_group;
  sc.read_group = config.socket_read_group;
  plugin->socket = std::make_unique<laas::service::SocketServer>(sc, plugin->engine->service(),
                                                                 logger_for(plugin->osm));
  try {
    plugin->socket->start();
  } catch (const std::exception& e) {
    log_line(plugin->osm, OSM_LOG_ERROR,
             std::string(e.what()) + "; continuing without the control socket");
    plugin->socket.reset();
  }
}

void start_watcher(Plugin* plugin) {
  try {
    plugin->watcher = std::thread(watch, plugin);
  } catch (const std::system_error& e) {
    log_line(plugin->osm, OSM_LOG_ERROR,
             std::string("cannot start the watcher thread: ") + e.what() +
                 "; continuing without it (tenants.yaml is read at routing runs only, and a "
                 "standby SM does not follow the shared state until it is master)");
  }
}

void start_switch_check(Plugin* plugin) {
  const int interval = plugin->engine->config().switch_check_interval_s;
  try {
    plugin->lft_check->start();
    if (interval <= 0)
      log_line(plugin->osm, OSM_LOG_INFO,
               "switch check off (switch_check_interval 0): tables rewritten behind OpenSM's "
               "back are found only by laasctl audit --from-switches");
    else
      log_line(plugin->osm, OSM_LOG_INFO,
               "switch check: every LFT block and port table read back every " +
                   std::to_string(interval) + " s");
  } catch (const std::system_error& e) {
    log_line(plugin->osm, OSM_LOG_ERROR,
             std::string("cannot start the switch check's thread: ") + e.what() +
                 "; LFTs rewritten behind OpenSM's back are not found");
  }
}

// Stops what start_socket, start_watcher and start_switch_check started, the watcher first.
void stop_threads(Plugin* plugin) {
  {
    std::lock_guard<std::mutex> lock(plugin->mu);
    plugin->stopping = true;
  }
  plugin->cv.notify_all();
  if (plugin->watcher.joinable()) plugin->watcher.join();
  if (plugin->lft_check) plugin->lft_check->stop();
  if (plugin->socket) plugin->socket->stop();
}

}  // namespace laas::plugin

// The switch check's OpenSM side (the bookkeeping is service/switch_check.h): reads LFT blocks
// back from the switches through OpenSM's own machinery and repairs what differs.
//
// - A read is osm_req_get(Get LinearForwardingTable) on the switch's directed route with the
//   M_Key OpenSM uses for its own Sets of that table (set_lft_block in osm_ucast_mgr.c), posted
//   on OpenSM's VL15 queue (max_wire_smps applies), under OpenSM's lock for reading.
// - The answer goes to OpenSM's LFT receiver (osm_lin_fwd_rcv.c), which, under OpenSM's lock
//   held exclusively, stores the block the switch really holds in OpenSM's copy (sw->lft) and
//   reports OSM_EVENT_ID_LFT_CHANGE to the event plugin: on_block() compares it with what this
//   SM computed (sw->new_lft, which OpenSM keeps until the next routing run).
// - A mismatch asks OpenSM for a re-route: since OpenSM's copy now holds the switch's block,
//   its unicast manager sends exactly the blocks that differ (set_lft_block compares new_lft
//   with lft per block).
// - Answers to reads sent before a routing run started are not compared (its Sets can cross
//   the read on the wire): routing_started() is called at the start of every run.
#pragma once

#include <array>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "service/switch_check.h"

struct osm_opensm;
struct osm_switch;

namespace laas::plugin {

class LftCheck {
 public:
  using Log = std::function<void(bool error, const std::string&)>;
  LftCheck(osm_opensm* osm, int interval_s, Log log, std::function<void()> reroute);
  ~LftCheck();
  LftCheck(const LftCheck&) = delete;
  LftCheck& operator=(const LftCheck&) = delete;

  std::shared_ptr<const service::SwitchCheck> bookkeeping() const { return check_; }
  // The checker thread (none when the interval is 0); it takes OpenSM's lock for reading.
  void start();
  void stop();

  // The calls below are made with OpenSM's lock held exclusively (routing callbacks, events).
  // A routing run starts.
  void routing_started() { ++run_; }
  // A routing run computed new tables: blocks found differing earlier are theirs now.
  void tables_computed() { found_.clear(); }
  // OSM_EVENT_ID_LFT_CHANGE: OpenSM's copy of `block` of `sw` now holds what the switch answered.
  void on_block(osm_switch* sw, unsigned block);
  // Failing closed, new_lft was copied from OpenSM's copy, which holds what the switch answered:
  // the blocks found differing get what this SM sent instead. Returns the blocks restored.
  std::size_t restore_found(osm_switch* sw);

 private:
  void run();
  void tick();
  void start_pass_locked();  // OpenSM's lock held for reading
  std::size_t send_reads_locked(service::SwitchCheck::Clock::time_point now);

  osm_opensm* osm_;
  std::shared_ptr<service::SwitchCheck> check_;
  Log log_;
  std::function<void()> reroute_;
  std::uint64_t run_ = 0;                                  // routing runs started (OpenSM's lock)
  service::SwitchCheck::Clock::time_point last_repair_{};  // the checker thread's
  // (switch GUID, block) -> the block this SM sent, for blocks a read found differing.
  std::map<std::pair<std::uint64_t, unsigned>, std::array<std::uint8_t, 64>> found_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
};

}  // namespace laas::plugin

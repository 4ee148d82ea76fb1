// The switch check's OpenSM side (the bookkeeping is service/switch_check.h): reads LFT blocks
// and port tables back from the switches and hosts through OpenSM's own machinery and repairs
// what differs.
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
// - Port tables (PortInfo of end ports, SL2VL pairs where owners meet, P_Key blocks of host
//   ports) are read the same way, with a context that makes OpenSM's receiver store the answer
//   as it stores a Set's (set_method: a discovery-style Get would count the port as discovered
//   again, and a P_Key Get would unbalance the blocks-outstanding count of its sweep). No event
//   reports those answers: they are compared once OpenSM has no SMP outstanding, with OpenSM's
//   copy (now what the port holds) against what this SM set -- the master SM LID must be this
//   SM's, LID and LMC what OpenSM's copy held when the read went out, SL2VL all VL15 where the
//   plugin drops, P_Key blocks what OpenSM's P_Key manager computed. A mismatch asks for a heavy
//   sweep: OpenSM's LID, link, P_Key and QoS managers send exactly what differs from their copy.
// - Answers to reads sent before a routing run or a heavy sweep started are not compared (its
//   Sets can cross the read on the wire): routing_started()/sweep_started() count them.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "service/switch_check.h"
#include "util/ticker.h"

struct osm_opensm;
struct osm_switch;

namespace laas::plugin {

class LftCheck {
 public:
  using Log = std::function<void(bool error, const std::string&)>;
  // Asks OpenSM for a re-route (heavy false) or a heavy sweep.
  using Repair = std::function<void(bool heavy)>;
  // Whether this SM drops every SL from `in` to `out` on the switch (the first-hop drop).
  using Drops = std::function<bool(std::uint64_t switch_guid, int in, int out)>;
  LftCheck(osm_opensm* osm, int interval_s, Log log, Repair repair, Drops drops);
  ~LftCheck();
  LftCheck(const LftCheck&) = delete;
  LftCheck& operator=(const LftCheck&) = delete;

  std::shared_ptr<service::SwitchCheck> bookkeeping() const { return check_; }
  // The checker thread (none when the interval is 0); it takes OpenSM's lock for reading.
  void start();
  void stop();

  // The calls below are made with OpenSM's lock held exclusively (routing callbacks, events).
  // A routing run starts.
  void routing_started() { sweep_started(); }
  // OSM_EVENT_ID_HEAVY_SWEEP_START too (no lock held): the sweep's Sets may cross reads. Port
  // reads are neither sent nor compared until it is done (below, or a minute later: a sweep
  // that fails reports nothing), since the QoS and P_Key managers send after routing.
  void sweep_started();
  // OSM_EVENT_ID_UCAST_ROUTING_DONE, HEAVY_SWEEP_DONE or SUBNET_UP.
  void sweep_done();
  // A routing run computed new tables: blocks found differing earlier are theirs now.
  void tables_computed() { found_.clear(); }
  // OSM_EVENT_ID_LFT_CHANGE: OpenSM's copy of `block` of `sw` now holds what the switch answered.
  void on_block(osm_switch* sw, unsigned block);
  // Failing closed, new_lft was copied from OpenSM's copy, which holds what the switch answered:
  // the blocks found differing get what this SM sent instead. Returns the blocks restored.
  std::size_t restore_found(osm_switch* sw);
  // Whether a routing run or heavy sweep started and has not said it is done (a minute at most).
  bool sweep_under_way(service::SwitchCheck::Clock::time_point now) const;

 private:
  void tick();
  // A port read sent, compared once OpenSM has no SMP outstanding.
  struct PendingPortRead {
    service::BlockRead read;
    service::SwitchCheck::Clock::time_point sent;
    std::uint16_t lid = 0;  // PortInfo: OpenSM's copy when the read went out
    std::uint8_t lmc = 0;
  };
  void start_pass_locked();  // OpenSM's lock held for reading
  std::size_t send_reads_locked(service::SwitchCheck::Clock::time_point now);
  bool send_lft_read_locked(const service::BlockRead& read);
  bool send_port_read_locked(const service::BlockRead& read,
                             service::SwitchCheck::Clock::time_point now);
  void compare_port_reads_locked(service::SwitchCheck::Clock::time_point now);
  bool port_read_matches_locked(const PendingPortRead& pending) const;

  osm_opensm* osm_;
  std::shared_ptr<service::SwitchCheck> check_;
  Log log_;
  Repair repair_;
  Drops drops_;
  std::atomic<std::uint64_t> run_{0};        // routing runs and heavy sweeps started or done
  std::atomic<std::int64_t> busy_since_{0};  // steady clock ticks; 0: no sweep under way
  service::SwitchCheck::Clock::time_point last_repair_{};  // the checker thread's
  // (switch GUID, block) -> the block this SM sent, for blocks a read found differing.
  std::map<std::pair<std::uint64_t, unsigned>, std::array<std::uint8_t, 64>> found_;
  std::vector<PendingPortRead> pending_;  // the checker thread's
  util::Ticker ticker_;                   // last: stopped first, while all a tick uses lives
};

}  // namespace laas::plugin

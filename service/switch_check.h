// The switch check's bookkeeping: which tables to read back from the switches and ports and
// when, which reads are outstanding, and what the answers showed. The tables are every LFT block
// of every switch and, per node, the port tables this SM sets that isolation rests on: the
// PortInfo fields it set (LID, LMC, master SM LID) of every end port, the SL2VL tables of switch
// port pairs where owners meet (the first-hop drop), and the P_Key blocks of host ports. The
// plugin sends the reads through OpenSM (a Get per table, with the port's M_Key) and hands each
// answer in with whether it equals what this SM sent; nothing here knows OpenSM.
//
// Why: OpenSM believes its own copy of each switch's table (sw->lft). A second SM with another
// SM_Key, or a tenant's root with a tool where no M_Key protects the switch, can rewrite entries
// behind its back, and OpenSM's next sweep then sends nothing, since its copy still equals what
// it computed. Reading every block back periodically finds such entries; the plugin then asks
// OpenSM to re-route, which sends exactly the blocks whose copy differs (the answer put the
// switch's real block into OpenSM's copy).
//
// A pass reads every table of every node once, spread over most of the interval (at most
// max_reads_per_second), so a block is read once per interval and a full pass at the LID limit
// never floods the SM's VL15 queue. An answer counts only when no routing run started between
// the read and the answer (`run`): a run changes what this SM sent, and its Sets may cross the
// read on the wire.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "topology/fabric.h"

namespace laas::service {

struct SwitchCheckLimits {
  int interval_s = 600;                // a pass starts every interval; 0: the check is off
  double spread = 0.8;                 // a pass's reads take this share of the interval
  double max_reads_per_second = 2000;  // whatever the interval: never faster
  std::chrono::milliseconds answer_timeout{10000};  // a read unanswered by then is given up
  std::size_t max_outstanding = 2000;               // no new reads while this many are unanswered
  int log_lines_per_minute = 20;  // mismatch lines; the rest are counted, not logged
};

// The tables a pass reads. LFT blocks are a switch's; the others are one port's.
enum class TableKind : std::uint8_t {
  kLft,       // index: the block (LIDs 64*index .. 64*index+63)
  kPortInfo,  // the fields this SM set: LID, LMC, master SM LID (index 0)
  kSl2Vl,     // port: the output port, index: the input port (a pair where owners meet)
  kPKey,      // index: the block (32 P_Keys)
};
const char* table_name(TableKind kind);  // "lft", "port_info", "sl2vl", "pkey"

// One port table to read on a node.
struct PortTable {
  TableKind kind = TableKind::kPortInfo;
  int port = 0;
  int index = 0;
};

// One node as a pass sees it: a switch's LFT blocks are 0 .. blocks-1 (the LIDs in use), then
// its port tables; a host has port tables only.
struct CheckedSwitch {
  CheckedSwitch(topology::Guid g, std::string n, int b, std::vector<PortTable> p = {})
      : guid(g), name(std::move(n)), blocks(b), ports(std::move(p)) {}
  topology::Guid guid = 0;
  std::string name;
  int blocks = 0;
  std::vector<PortTable> ports;
};

struct BlockRead {
  BlockRead(topology::Guid g = 0, int b = 0, TableKind k = TableKind::kLft, int p = 0)
      : guid(g), block(b), kind(k), port(p) {}
  topology::Guid guid = 0;
  int block = 0;  // the LFT block, or a port table's index
  TableKind kind = TableKind::kLft;
  int port = 0;
  bool operator==(const BlockRead& o) const {
    return guid == o.guid && block == o.block && kind == o.kind && port == o.port;
  }
};

enum class ReadOutcome {
  kNotAsked,  // no read of this block is outstanding (a Set's answer, a late one): ignored
  kStale,     // a routing run started since the read: not compared
  kMatch,
  kMismatch,  // counted; a repair is wanted
};

class SwitchCheck {
 public:
  using Clock = std::chrono::steady_clock;
  explicit SwitchCheck(SwitchCheckLimits limits = {});

  bool enabled() const { return limits_.interval_s > 0; }
  const SwitchCheckLimits& limits() const { return limits_; }

  // Whether a new pass is due: none under way and an interval since the last one started.
  bool pass_due(Clock::time_point now) const;
  // `laasctl audit --from-switches`: the next pass starts at once (a pass under way is started
  // over; with the periodic check off too) and reads at max_reads_per_second. Returns the number of
  // that pass, for pass_finished.
  long request_pass_now();
  bool pass_finished(long pass) const;
  // Blocks until pass_finished(pass) or the timeout; false at the timeout. Woken by each answer,
  // given-up read and pass start, so a waiting request costs no polling.
  bool wait_pass_finished(long pass, Clock::duration timeout) const;
  bool pass_under_way() const;
  // Starts a pass over these switches (in this order; those with no blocks are skipped).
  void start_pass(std::vector<CheckedSwitch> switches, Clock::time_point now);
  // The reads to send now, each recorded as outstanding in routing run `run`: the pass's next
  // blocks at its pace. Reads unanswered for answer_timeout are given up here. A read the
  // caller could not send is handed back with forget().
  std::vector<BlockRead> next_reads(std::uint64_t run, Clock::time_point now);
  void forget(const BlockRead& read);

  // An answer: the block as the switch holds it equals (`matches`) what this SM sent, or not;
  // `run` is the routing run counter now.
  ReadOutcome answer(topology::Guid guid, int block, std::uint64_t run, bool matches,
                     Clock::time_point now) {
    return answer(BlockRead{guid, block}, run, matches, now);
  }
  ReadOutcome answer(const BlockRead& read, std::uint64_t run, bool matches, Clock::time_point now);

  // What the mismatches found since the last call ask for: LFT blocks are sent again by a
  // re-route; port tables by a heavy sweep (OpenSM's LID, link, P_Key and QoS managers send a
  // port's table only where their copy, now holding the answer, differs).
  struct Repair {
    bool lft = false;
    bool ports = false;
    bool any() const { return lft || ports; }
  };
  Repair take_repairs();
  bool take_repair() { return take_repairs().any(); }
  // Mismatch lines to log now: at most log_lines_per_minute a minute, then one line saying how
  // many were not logged.
  std::vector<std::string> take_log_lines(Clock::time_point now);

  // For status, audit and metrics.
  long mismatches_total() const;
  long reads_total() const;
  long unanswered_total() const;
  long passes_total() const;
  long mismatches_total(TableKind kind) const;
  // {interval_s, reads_per_second (the current pass's pace), pass {blocks, read, answered,
  // started_s_ago}, passes, last_pass_seconds, reads, unanswered, mismatches,
  // mismatches_by_table {lft, port_info, sl2vl, pkey}, switches: [{guid, name, mismatches,
  // blocks_differing, ports_differing: [{table, port, index}]}]} -- switches only those (nodes:
  // hosts too) with a mismatch seen.
  nlohmann::json report(Clock::time_point now) const;

 private:
  struct Asked {
    std::uint64_t run;
    Clock::time_point at;
  };
  struct Found {
    std::string name;
    long mismatches = 0;
    std::set<int> differing;  // blocks whose last counted read differed
    std::set<std::tuple<TableKind, int, int>> ports_differing;  // (kind, port, index)
  };
  using ReadKey = std::tuple<topology::Guid, TableKind, int, int>;  // guid, kind, port, index
  static ReadKey key_of(const BlockRead& r) { return {r.guid, r.kind, r.port, r.block}; }
  void note_differing(Found& f, const BlockRead& read, bool differs);
  std::string mismatch_line(const Found& f, const BlockRead& read) const;
  void expire(Clock::time_point now);  // mu_ held
  bool pass_done() const;              // mu_ held
  bool pass_finished_locked(long pass) const;
  void outstanding_changed();  // mu_ held: the count answer() reads without mu_, and the waiters

  const SwitchCheckLimits limits_;
  mutable std::mutex mu_;
  mutable std::condition_variable progress_;  // a pass may have finished (wait_pass_finished)
  // outstanding_.size(), read without mu_ by answer(): OpenSM reports every LFT block it gets,
  // its own uploads of millions included, and all but the check's few are not asked for.
  std::atomic<std::size_t> outstanding_n_{0};
  std::vector<CheckedSwitch> pass_;
  std::map<topology::Guid, std::string> names_;  // of the current pass
  std::size_t cursor_switch_ = 0;
  int cursor_block_ = 0;  // LFT blocks first, then port tables (blocks + i)
  long pass_blocks_ = 0, pass_read_ = 0, pass_answered_ = 0;
  bool pass_running_ = false;
  bool ever_started_ = false;
  Clock::time_point pass_start_{}, last_pace_{}, pass_end_{};
  double pace_ = 0;    // reads per second of this pass
  double credit_ = 0;  // reads allowed and not yet sent
  std::map<ReadKey, Asked> outstanding_;
  std::map<topology::Guid, Found> found_;
  long mismatches_ = 0, reads_ = 0, unanswered_ = 0, passes_ = 0;
  long started_ = 0;          // passes started
  long pass_mismatches_ = 0;  // found by the pass under way (or the last)
  bool now_wanted_ = false;   // request_pass_now() and no pass started since
  std::map<TableKind, long> mismatches_by_kind_;
  double last_pass_seconds_ = -1;
  Repair repair_;
  std::deque<std::string> pending_lines_;
  long unlogged_ = 0;
  std::deque<Clock::time_point> logged_at_;  // lines logged in the last minute
};

}  // namespace laas::service

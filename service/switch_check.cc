#include "service/switch_check.h"

#include <algorithm>
#include <cmath>

#include "util/guid.h"

namespace laas::service {

using nlohmann::json;

const char* table_name(TableKind kind) {
  switch (kind) {
    case TableKind::kLft:
      return "lft";
    case TableKind::kPortInfo:
      return "port_info";
    case TableKind::kSl2Vl:
      return "sl2vl";
    case TableKind::kPKey:
      return "pkey";
  }
  return "unknown";
}

namespace {

int reads_of(const CheckedSwitch& s) {
  return std::max(0, s.blocks) + static_cast<int>(s.ports.size());
}

}  // namespace

SwitchCheck::SwitchCheck(SwitchCheckLimits limits) : limits_(limits) {}

bool SwitchCheck::pass_done() const {
  return cursor_switch_ >= pass_.size() && outstanding_.empty();
}

long SwitchCheck::request_pass_now() {
  std::lock_guard<std::mutex> lock(mu_);
  now_wanted_ = true;
  return started_ + 1;
}

bool SwitchCheck::pass_finished_locked(long pass) const {
  return started_ > pass || (started_ == pass && pass_running_ && pass_done());
}

bool SwitchCheck::pass_finished(long pass) const {
  std::lock_guard<std::mutex> lock(mu_);
  return pass_finished_locked(pass);
}

bool SwitchCheck::wait_pass_finished(long pass, Clock::duration timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  return progress_.wait_for(lock, timeout, [&] { return pass_finished_locked(pass); });
}

void SwitchCheck::outstanding_changed() {
  outstanding_n_.store(outstanding_.size(), std::memory_order_release);
  progress_.notify_all();
}

bool SwitchCheck::pass_under_way() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pass_running_ && !pass_done();
}

bool SwitchCheck::pass_due(Clock::time_point now) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (now_wanted_) return true;  // on demand, even with the periodic check off
  if (!enabled()) return false;
  if (pass_running_ && !pass_done()) return false;
  return !ever_started_ || now - pass_start_ >= std::chrono::seconds(limits_.interval_s);
}

void SwitchCheck::start_pass(std::vector<CheckedSwitch> switches, Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  if (pass_running_ && pass_done()) {
    ++passes_;
    last_pass_seconds_ = std::chrono::duration<double>(pass_end_ - pass_start_).count();
  }
  switches.erase(std::remove_if(switches.begin(), switches.end(),
                                [](const CheckedSwitch& s) { return reads_of(s) == 0; }),
                 switches.end());
  pass_ = std::move(switches);
  names_.clear();
  pass_blocks_ = 0;
  for (const auto& s : pass_) {
    pass_blocks_ += reads_of(s);
    names_[s.guid] = s.name;
  }
  cursor_switch_ = 0;
  cursor_block_ = 0;
  pass_read_ = pass_answered_ = 0;
  pass_mismatches_ = 0;
  ++started_;
  const bool at_once = now_wanted_;
  now_wanted_ = false;
  pass_running_ = true;
  ever_started_ = true;
  pass_start_ = last_pace_ = pass_end_ = now;
  // Every block once over `spread` of the interval, never faster than the cap.
  const double seconds = std::max(1.0, limits_.spread * limits_.interval_s);
  pace_ = at_once
              ? limits_.max_reads_per_second
              : std::min(limits_.max_reads_per_second, static_cast<double>(pass_blocks_) / seconds);
  credit_ = 1;  // the first read goes now
  outstanding_changed();
}

void SwitchCheck::expire(Clock::time_point now) {
  for (auto it = outstanding_.begin(); it != outstanding_.end();)
    if (now - it->second.at >= limits_.answer_timeout) {
      ++unanswered_;
      pass_end_ = now;
      it = outstanding_.erase(it);
    } else {
      ++it;
    }
  outstanding_changed();
}

std::vector<BlockRead> SwitchCheck::next_reads(std::uint64_t run, Clock::time_point now) {
  std::vector<BlockRead> out;
  std::lock_guard<std::mutex> lock(mu_);
  expire(now);
  if (!pass_running_) return out;
  const double dt = std::chrono::duration<double>(now - last_pace_).count();
  last_pace_ = now;
  // A stalled caller (a long routing run) gets at most a second's reads at once.
  credit_ = std::min(credit_ + pace_ * std::max(0.0, dt), std::max(1.0, pace_));
  while (credit_ >= 1 && cursor_switch_ < pass_.size() &&
         outstanding_.size() < limits_.max_outstanding) {
    const auto& sw = pass_[cursor_switch_];
    BlockRead read{sw.guid, cursor_block_};
    const int lft_blocks = std::max(0, sw.blocks);
    if (cursor_block_ >= lft_blocks) {
      const PortTable& t = sw.ports[static_cast<std::size_t>(cursor_block_ - lft_blocks)];
      read = BlockRead{sw.guid, t.index, t.kind, t.port};
    }
    if (++cursor_block_ >= reads_of(sw)) {
      ++cursor_switch_;
      cursor_block_ = 0;
    }
    outstanding_[key_of(read)] = Asked{run, now};
    out.push_back(read);
    credit_ -= 1;
    ++reads_;
    ++pass_read_;
  }
  outstanding_changed();
  return out;
}

void SwitchCheck::forget(const BlockRead& read) {
  std::lock_guard<std::mutex> lock(mu_);
  if (outstanding_.erase(key_of(read)) > 0) {
    --reads_;
    --pass_read_;
  }
  outstanding_changed();
}

ReadOutcome SwitchCheck::answer(const BlockRead& read, std::uint64_t run, bool matches,
                                Clock::time_point now) {
  // A read is counted before it is sent, so its answer always finds the count above zero.
  if (outstanding_n_.load(std::memory_order_acquire) == 0) return ReadOutcome::kNotAsked;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = outstanding_.find(key_of(read));
  if (it == outstanding_.end()) return ReadOutcome::kNotAsked;
  pass_end_ = now;
  const bool stale = it->second.run != run;
  outstanding_.erase(it);
  outstanding_changed();
  ++pass_answered_;
  if (stale) return ReadOutcome::kStale;
  auto known = found_.find(read.guid);
  if (matches) {
    if (known != found_.end()) note_differing(known->second, read, false);
    return ReadOutcome::kMatch;
  }
  auto& f = found_[read.guid];
  auto name = names_.find(read.guid);
  if (name != names_.end()) f.name = name->second;
  ++f.mismatches;
  note_differing(f, read, true);
  ++mismatches_;
  ++pass_mismatches_;
  ++mismatches_by_kind_[read.kind];
  (read.kind == TableKind::kLft ? repair_.lft : repair_.ports) = true;
  pending_lines_.push_back(mismatch_line(f, read));
  if (pending_lines_.size() > 1000) {
    pending_lines_.pop_front();
    ++unlogged_;
  }
  return ReadOutcome::kMismatch;
}

void SwitchCheck::note_differing(Found& f, const BlockRead& read, bool differs) {
  if (read.kind == TableKind::kLft) {
    if (differs)
      f.differing.insert(read.block);
    else
      f.differing.erase(read.block);
    return;
  }
  const auto key = std::make_tuple(read.kind, read.port, read.block);
  if (differs)
    f.ports_differing.insert(key);
  else
    f.ports_differing.erase(key);
}

std::string SwitchCheck::mismatch_line(const Found& f, const BlockRead& read) const {
  std::string what;
  switch (read.kind) {
    case TableKind::kLft:
      // Block b holds LIDs 64b .. 64b+63.
      what = "LFT block " + std::to_string(read.block) + " (LIDs " +
             std::to_string(read.block * 64) + "-" + std::to_string(read.block * 64 + 63) + ")";
      break;
    case TableKind::kPortInfo:
      what = "port " + std::to_string(read.port) + "'s PortInfo (LID, LMC or master SM LID)";
      break;
    case TableKind::kSl2Vl:
      what = "the SL2VL table from port " + std::to_string(read.block) + " to port " +
             std::to_string(read.port) + " (a first-hop drop)";
      break;
    case TableKind::kPKey:
      what = "port " + std::to_string(read.port) + "'s P_Key block " + std::to_string(read.block);
      break;
  }
  return (read.kind == TableKind::kLft ? "switch " : "node ") + util::guid_hex(read.guid) +
         (f.name.empty() ? "" : " (" + f.name + ")") + ": " + what +
         " differs from what this SM sent; sending it again";
}

SwitchCheck::Repair SwitchCheck::take_repairs() {
  std::lock_guard<std::mutex> lock(mu_);
  const Repair r = repair_;
  repair_ = Repair{};
  return r;
}

std::vector<std::string> SwitchCheck::take_log_lines(Clock::time_point now) {
  std::vector<std::string> out;
  std::lock_guard<std::mutex> lock(mu_);
  while (!logged_at_.empty() && now - logged_at_.front() >= std::chrono::minutes(1))
    logged_at_.pop_front();
  while (!pending_lines_.empty() &&
         logged_at_.size() < static_cast<std::size_t>(limits_.log_lines_per_minute)) {
    out.push_back(std::move(pending_lines_.front()));
    pending_lines_.pop_front();
    logged_at_.push_back(now);
  }
  if (!pending_lines_.empty() &&
      logged_at_.size() >= static_cast<std::size_t>(limits_.log_lines_per_minute)) {
    unlogged_ += static_cast<long>(pending_lines_.size());
    pending_lines_.clear();
  }
  if (unlogged_ > 0 && out.empty() &&
      logged_at_.size() < static_cast<std::size_t>(limits_.log_lines_per_minute)) {
    out.push_back(std::to_string(unlogged_) +
                  " more LFT block(s) or port table(s) differed from what this SM sent (not logged "
                  "one by one; counted in laas_switch_table_mismatches_total, listed by laasctl "
                  "audit)");
    logged_at_.push_back(now);
    unlogged_ = 0;
  }
  return out;
}

long SwitchCheck::mismatches_total() const {
  std::lock_guard<std::mutex> lock(mu_);
  return mismatches_;
}
long SwitchCheck::mismatches_total(TableKind kind) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = mismatches_by_kind_.find(kind);
  return it == mismatches_by_kind_.end() ? 0 : it->second;
}
long SwitchCheck::reads_total() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reads_;
}
long SwitchCheck::unanswered_total() const {
  std::lock_guard<std::mutex> lock(mu_);
  return unanswered_;
}
long SwitchCheck::passes_total() const {
  std::lock_guard<std::mutex> lock(mu_);
  return passes_ + (pass_running_ && pass_done() ? 1 : 0);
}

json SwitchCheck::report(Clock::time_point now) const {
  std::lock_guard<std::mutex> lock(mu_);
  const bool done = pass_running_ && pass_done();
  nlohmann::json j = {
      {"interval_s", limits_.interval_s},   {"reads_per_second", std::round(pace_ * 10) / 10},
      {"passes", passes_ + (done ? 1 : 0)}, {"reads", reads_},
      {"unanswered", unanswered_},          {"mismatches", mismatches_}};
  if (done)
    j["last_pass_seconds"] =
        std::round(std::chrono::duration<double>(pass_end_ - pass_start_).count() * 10) / 10;
  else if (last_pass_seconds_ >= 0)
    j["last_pass_seconds"] = std::round(last_pass_seconds_ * 10) / 10;
  if (pass_running_)
    j["pass"] = {{"blocks", pass_blocks_},
                 {"read", pass_read_},
                 {"answered", pass_answered_},
                 {"number", started_},
                 {"mismatches", pass_mismatches_},
                 {"done", done},
                 {"started_s_ago",
                  std::round(std::chrono::duration<double>(now - pass_start_).count() * 10) / 10}};
  nlohmann::json by_table = nlohmann::json::object();
  for (auto kind : {TableKind::kLft, TableKind::kPortInfo, TableKind::kSl2Vl, TableKind::kPKey}) {
    auto it = mismatches_by_kind_.find(kind);
    by_table[table_name(kind)] = it == mismatches_by_kind_.end() ? 0 : it->second;
  }
  j["mismatches_by_table"] = by_table;
  nlohmann::json switches = nlohmann::json::array();
  for (const auto& [guid, f] : found_) {
    nlohmann::json ports = nlohmann::json::array();
    for (const auto& [kind, port, index] : f.ports_differing)
      ports.push_back({{"table", table_name(kind)}, {"port", port}, {"index", index}});
    switches.push_back({{"guid", util::guid_hex(guid)},
                        {"name", f.name},
                        {"mismatches", f.mismatches},
                        {"blocks_differing", f.differing},
                        {"ports_differing", ports}});
  }
  j["switches"] = switches;
  return j;
}

}  // namespace laas::service

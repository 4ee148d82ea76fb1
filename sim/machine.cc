#include "sim/machine.h"

#include <time.h>

#include <chrono>
#include <limits>

#include "check/checker.h"

namespace laas::sim {

Machine::Machine(const FatTree& tree, const Placer& placer, const Workload& work,
                 CheckOptions check, TransactionSink sink, const Placer* candidates)
    : tree_(&tree),
      placer_(&placer),
      candidates_(candidates ? candidates : &placer),
      work_(&work),
      check_(check),
      sink_(std::move(sink)),
      state_(tree),
      records_(work.size()),
      placements_(work.size()),
      is_running_(work.size(), 0) {}

std::optional<Placement> Machine::search(const LinkState& s, int hosts) {
  return timed_search(*placer_, s, hosts);
}

std::optional<Placement> Machine::search_candidate(const LinkState& s, int hosts) {
  return timed_search(*candidates_, s, hosts);
}

std::optional<Placement> Machine::timed_search(const Placer& placer, const LinkState& s,
                                               int hosts) {
  if (hosts > s.free_hosts()) return std::nullopt;  // no search can succeed
  timespec c0{}, c1{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
  auto t0 = std::chrono::steady_clock::now();
  auto r = placer.place(s, hosts);
  auto t1 = std::chrono::steady_clock::now();
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
  search_us_.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  search_cpu_us_.push_back((c1.tv_sec - c0.tv_sec) * 1e6 + (c1.tv_nsec - c0.tv_nsec) / 1e3);
  return std::move(r.placement);
}

void Machine::start(int idx, Placement p, double now) {
  const Request& r = request(idx);
  std::string why;
  if (!state_.can_assign(p, &why)) {
    throw CheckFailure("t=" + format_time(now) + " tenant " + std::to_string(r.id) +
                       ": placer returned a placement that is not free: " + why);
  }
  state_.assign(idx, p);
  auto& rec = records_[idx];
  rec.start = now;
  rec.end = now + r.runtime;
  rec.hosts_held = static_cast<int>(p.hosts.size());
  rec.l1_links = rec.l2_links = 0;
  for (auto l : p.links) (tree_->link_level(l) == 1 ? rec.l1_links : rec.l2_links)++;
  placements_[idx] = std::move(p);
  is_running_[idx] = 1;
  ++running_count_;
  ends_.emplace(rec.end, idx);
  hosts_requested_ += r.size;
  hosts_held_ += rec.hosts_held;
  l1_ += rec.l1_links;
  l2_ += rec.l2_links;
  if (sink_) sink_(Transaction{true, now, r.id, r.size, &placements_[idx]});
  after_transaction(idx, true);
}

void Machine::reject(int idx, const std::string& why) {
  records_[idx].rejected = true;
  records_[idx].reason = why;
}

void Machine::finish_until(double now) {
  while (!ends_.empty() && ends_.top().first <= now) {
    auto [end, idx] = ends_.top();
    ends_.pop();
    const Request& r = request(idx);
    state_.release(idx, placements_[idx]);
    is_running_[idx] = 0;
    --running_count_;
    hosts_requested_ -= r.size;
    hosts_held_ -= records_[idx].hosts_held;
    l1_ -= records_[idx].l1_links;
    l2_ -= records_[idx].l2_links;
    if (sink_) sink_(Transaction{false, end, r.id, r.size, &placements_[idx]});
    after_transaction(idx, false);
    placements_[idx] = Placement{};  // frees memory; the record keeps the counts
  }
}

double Machine::next_end() const {
  return ends_.empty() ? std::numeric_limits<double>::infinity() : ends_.top().first;
}

std::vector<std::pair<double, int>> Machine::running_by_end() const {
  auto copy = ends_;
  std::vector<std::pair<double, int>> out;
  out.reserve(copy.size());
  while (!copy.empty()) {
    out.push_back(copy.top());
    copy.pop();
  }
  return out;
}

Sample Machine::sample(double t) const {
  Sample s{t, hosts_requested_, hosts_held_, l1_, l2_, 0};
  if (placer_->isolates() && tree_->up_columns(1) > 0) {
    for (int leaf = 0; leaf < tree_->num_leaves(); ++leaf) {
      if (state_.free_columns(1, leaf).none()) s.stranded_hosts += state_.free_hosts_on_leaf(leaf);
    }
  }
  return s;
}

void Machine::after_transaction(int idx, bool add) {
  ++transactions_;
  if (check_.every <= 0) return;
  if (check_.every == 1) {
    full_check(std::string(add ? "ADD " : "REM ") + std::to_string(request(idx).id));
    return;
  }
  if (add) {
    const Placement& p = placements_[idx];
    check::TenantView v{std::to_string(request(idx).id), p.hosts, p.links, placer_->isolates()};
    if (!check_.leaf_rail.empty()) v.leaf_rail = &check_.leaf_rail;
    auto bad = placer_->isolates() ? check::check_tenant_shape(*tree_, v)
                                   : std::vector<check::Violation>{};
    if (static_cast<int>(p.hosts.size()) < request(idx).size) {
      bad.push_back({v.name, "size", "holds fewer hosts than requested"});
    }
    if (!bad.empty()) {
      throw CheckFailure("after ADD " + v.name + ": " + check::to_string(bad.front()));
    }
  }
  if (transactions_ % check_.every == 0) full_check("transaction " + std::to_string(transactions_));
}

void Machine::full_check(const std::string& when) {
  std::vector<check::TenantView> views;
  views.reserve(running_count_);
  for (size_t i = 0; i < is_running_.size(); ++i) {
    if (!is_running_[i]) continue;
    views.push_back(check::TenantView{std::to_string((*work_)[i].id), placements_[i].hosts,
                                      placements_[i].links, placer_->isolates()});
    if (!check_.leaf_rail.empty()) views.back().leaf_rail = &check_.leaf_rail;
    if (static_cast<int>(placements_[i].hosts.size()) < (*work_)[i].size) {
      throw CheckFailure("after " + when + ": tenant " + views.back().name +
                         " holds fewer hosts than requested");
    }
  }
  ++checks_run_;
  auto bad = check::check_all(*tree_, views, {});
  if (!bad.empty()) {
    throw CheckFailure("after " + when + ": " + check::to_string(bad.front()) + " (" +
                       std::to_string(bad.size()) + " violations)");
  }
}

void Machine::final_check() {
  if (check_.every > 0) full_check("end of run");
}

}  // namespace laas::sim

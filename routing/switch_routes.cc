#include "routing/switch_routes.h"

#include <algorithm>
#include <atomic>

#include "util/threads.h"

namespace laas::routing::phases {

SwitchRoutes::SwitchRoutes(const RouteInput& in, const ManagementLinks& mgmt, ModelTables& out,
                           SwitchRoutesMemo* memo, bool reuse)
    : in_(in),
      mgmt_(mgmt),
      t_(in.t),
      out_(out),
      memo_(memo),
      reuse_(reuse),
      n_(out.num_switches()) {}

// ---- the switch graph -------------------------------------------------------------------

void SwitchRoutes::build_graph() {
  start_.assign(n_ + 1, 0);
  for (int number = 0; number < n_; ++number) {
    start_[number] = static_cast<int>(arcs_.size());
    const auto [level, index] = out_.switch_at(number);
    if (level < in_.h) add_up_arcs(level, index);
    if (level > 1) add_down_arcs(level, index);
  }
  start_[n_] = static_cast<int>(arcs_.size());
  into_.assign(n_, {});
  for (int u = 0; u < n_; ++u)
    for (int a = start_[u]; a < start_[u + 1]; ++a) into_[arcs_[a].first].push_back({u, a});
  restricted_ = std::find(open_.begin(), open_.end(), 0) != open_.end();
  tail_.assign(arcs_.size(), 0);
  for (int u = 0; u < n_; ++u)
    for (int a = start_[u]; a < start_[u + 1]; ++a) tail_[a] = u;
}

void SwitchRoutes::add_up_arcs(int level, int index) {
  const int ups = t_.up_columns(level);
  for (int c = 0; c < ups; ++c) {
    const LinkId l = level == 1 ? t_.l1_link(index, c) : t_.l2_link(index, c);
    if (in_.faulty[l]) continue;
    const auto parent = t_.parent_of(level, index, c);
    arcs_.push_back({out_.switch_number(parent.level, parent.index), t_.up_port(level, c)});
    const bool blocked = level == 1 && mgmt_.block[index].test(c);
    open_.push_back(in_.owner[l] == kFree && !blocked);
    last_.push_back(level > 1 && in_.owner[l] >= 0);
    blocked_.push_back(blocked);
  }
}

// Down-links: the children's up-links pointing here.
void SwitchRoutes::add_down_arcs(int level, int index) {
  for (int child = 0; child < t_.m(level); ++child)
    for (int j = 0; j < t_.p(level); ++j) {
      int child_level = level - 1, child_index, column;
      if (level == 2) {
        const int pod = t_.pod_of_level2(index);
        child_index = pod * t_.leaves_per_pod() + child;
        column = (index % in_.l2_per_pod) * in_.p2 + j;
      } else {
        const int b2 = index / in_.w3;
        child_index = t_.level2_switch(child, b2);
        column = (index % in_.w3) * in_.p3 + j;
      }
      const LinkId l =
          child_level == 1 ? t_.l1_link(child_index, column) : t_.l2_link(child_index, column);
      if (in_.faulty[l]) continue;
      arcs_.push_back(
          {out_.switch_number(child_level, child_index), t_.down_port(level, child, j)});
      open_.push_back(in_.owner[l] == kFree);
      last_.push_back(in_.owner[l] >= 0);
      blocked_.push_back(0);
    }
}

void SwitchRoutes::bfs(Scratch& sc, int dst, Mode mode, std::vector<int>& d) const {
  std::fill(d.begin(), d.end(), -1);
  int head = 0, tail = 0;
  d[dst] = 0;
  sc.queue[tail++] = dst;
  while (head < tail) {
    const int v = sc.queue[head++];
    // Backwards: the switches u with a usable arc u -> v.
    for (const auto& [u, a] : into_[v]) {
      if (d[u] >= 0) continue;
      if (mode != kAll) {
        if (mode == kUnblocked ? blocked_[a] != 0
                               : !(open_[a] != 0 || (mode == kOpen && v == dst && last_[a])))
          continue;
      }
      d[u] = d[v] + 1;
      sc.queue[tail++] = u;
    }
  }
}

// ---- choosing a port ----------------------------------------------------------------------

// The (dst mod count)-th of switch u's arcs that `ok` admits, or -1 when it admits none:
// destinations spread over equal ways the same way in every run.
template <class Ok>
int SwitchRoutes::spread_arc(int u, int dst, Ok&& ok) const {
  int count = 0;
  for (int a = start_[u]; a < start_[u + 1]; ++a) count += ok(a);
  if (count == 0) return -1;
  int k = dst % count;
  for (int a = start_[u]; a < start_[u + 1]; ++a)
    if (ok(a) && k-- == 0) return a;
  return -1;
}

// The port of switch u towards switch dst when open links reach dst from u, given the
// distances to dst over open links (S) and over every working link (W): the route without
// tenants while it is open, else the (dst mod count)-th open arc of a shortest way.
template <class S, class W>
std::uint8_t SwitchRoutes::strict_choice(int u, int dst, S&& strict, W&& whole) const {
  auto next = [&](int a) { return arcs_[a].first; };
  auto ok = [&](int a) { return open_[a] && strict(next(a)) == strict(u) - 1; };
  if (restricted_ && whole(u) == strict(u)) {
    const int without_tenants =
        spread_arc(u, dst, [&](int a) { return whole(next(a)) == whole(u) - 1; });
    if (without_tenants >= 0 && ok(without_tenants)) return port_of(without_tenants);
  }
  return port_of(spread_arc(u, dst, ok));
}

// The port of switch u towards switch dst when only open links and a tenant's link as
// the last hop reach dst from u, given those distances.
template <class D>
std::uint8_t SwitchRoutes::open_choice(int u, int dst, D&& dist) const {
  int arc =
      spread_arc(u, dst, [&](int a) { return open_[a] && dist(arcs_[a].first) == dist(u) - 1; });
  if (arc < 0)
    arc = spread_arc(u, dst,
                     [&](int a) { return arcs_[a].first == dst && last_[a] && dist(u) == 1; });
  return port_of(arc);
}

// The port of switch u towards dst when neither open links nor a tenant's last hop reach dst
// from u: over the links the drop lets pass (not a management up-link, even when that is
// shorter: the drop would stop everyone but the management hosts there), else over any,
// preferring neighbours from which a strict, then an open path of the right length goes on.
// Candidate filters best first; each keeps the path minimal for its distance.
std::uint8_t SwitchRoutes::wider_choice(const Scratch& sc, int u, int dst) const {
  auto next = [&](int a) { return arcs_[a].first; };
  const auto &strict = sc.strict, &dist = sc.dist, &dist_unblocked = sc.dist_unblocked,
             &dist_all = sc.dist_all;
  int arc = -1;
  if (dist_unblocked[u] > 0) {
    const int want = dist_unblocked[u] - 1;
    auto ok = [&](int a) { return !blocked_[a] && dist_unblocked[next(a)] == want; };
    arc = spread_arc(u, dst, [&](int a) { return ok(a) && strict[next(a)] == want; });
    if (arc < 0) arc = spread_arc(u, dst, [&](int a) { return ok(a) && dist[next(a)] == want; });
    if (arc < 0) arc = spread_arc(u, dst, ok);
  } else if (dist_all[u] > 0) {
    const int want = dist_all[u] - 1;
    arc = spread_arc(u, dst, [&](int a) { return strict[next(a)] == want; });
    if (arc < 0) arc = spread_arc(u, dst, [&](int a) { return dist[next(a)] == want; });
    if (arc < 0) arc = spread_arc(u, dst, [&](int a) { return dist_all[next(a)] == want; });
  }
  return port_of(arc);
}

// Three distances to dst: over open links only (strict), over open links and a tenant's link
// as the last hop (open), over every link (all). A switch uses the first that reaches; one
// that only "all" reaches (a leaf whose up-links are all held) prefers neighbours from which
// a strict, then an open path of the right length goes on. The wider searches are made only
// when a narrower one leaves some switch unreached.
void SwitchRoutes::distances_to(Scratch& sc, int dst) const {
  auto unreached = [](const std::vector<int>& d) {
    return std::find(d.begin(), d.end(), -1) != d.end();
  };
  bfs(sc, dst, kStrict, sc.strict);
  // Distances over every working link: the routes a fabric without tenants would take.
  // Where the open links are as short, keep that route while it is open, so that a tenant
  // taking or releasing links moves only the routes over them (few LFT blocks change).
  if (restricted_) bfs(sc, dst, kAll, sc.whole);
  if (unreached(sc.strict)) {
    bfs(sc, dst, kOpen, sc.dist);
  } else {
    sc.dist = sc.strict;
  }
  if (unreached(sc.dist)) {
    bfs(sc, dst, kUnblocked, sc.dist_unblocked);
    if (unreached(sc.dist_unblocked))
      bfs(sc, dst, kAll, sc.dist_all);
    else
      sc.dist_all = sc.dist_unblocked;
  } else {
    sc.dist_unblocked = sc.dist;
    sc.dist_all = sc.dist;
  }
}

// Ports of every switch towards switch dst (column[u]).
void SwitchRoutes::route_to(Scratch& sc, int dst, std::uint8_t* column) {
  distances_to(sc, dst);
  if (memo_) remember(dst, sc.strict, sc.dist, sc.whole);
  const auto &strict = sc.strict, &dist = sc.dist, &whole = sc.whole;
  for (int u = 0; u < n_; ++u) {
    if (u == dst)
      column[u] = kSelf;
    else if (strict[u] > 0)
      column[u] = strict_choice(
          u, dst, [&](int x) { return strict[x]; }, [&](int x) { return whole[x]; });
    else if (dist[u] > 0)
      column[u] = open_choice(u, dst, [&](int x) { return dist[x]; });
    else
      column[u] = wider_choice(sc, u, dst);
  }
}

// ---- reusing the previous run's distances -------------------------------------------------

// The distances of a destination for the next run (255: unreached).
void SwitchRoutes::remember(int dst, const std::vector<int>& strict, const std::vector<int>& dist,
                            const std::vector<int>& whole) {
  const std::size_t row = std::size_t(dst) * n_;
  bool far = false;
  auto keep = [&far](int d) {
    far |= d > 254;
    return d < 0 || d > 254 ? std::uint8_t(255) : static_cast<std::uint8_t>(d);
  };
  // Without restriction every working link is open: the distances over them are the
  // strict ones. Kept either way, so that the next run may reuse them whether or not
  // tenants hold links then (the first tenant on a fabric with none, the last one gone).
  for (int u = 0; u < n_; ++u) {
    memo_->strict[row + u] = keep(strict[u]);
    memo_->dist[row + u] = keep(dist[u]);
    memo_->whole[row + u] = keep(restricted_ ? whole[u] : strict[u]);
  }
  memo_->reusable[dst] = !far;
}

// An incremental run: the arcs whose openness changed since the run the memo holds (the
// arcs themselves are the same: the faulty links are). Otherwise the memo is filled anew.
void SwitchRoutes::prepare_memo() {
  const std::size_t cells = static_cast<std::size_t>(n_) * n_;
  reuse_ = memo_ && reuse_ && memo_->valid && memo_->open.size() == open_.size() &&
           memo_->strict.size() == cells && memo_->whole.size() == cells;
  if (reuse_) {
    for (int a = 0; a < static_cast<int>(arcs_.size()); ++a)
      if (open_[a] != memo_->open[a] || last_[a] != memo_->last[a]) {
        changed_.push_back(a);
        tails_.push_back(tail_[a]);
      }
    std::sort(tails_.begin(), tails_.end());
    tails_.erase(std::unique(tails_.begin(), tails_.end()), tails_.end());
  } else if (memo_) {
    memo_->strict.assign(cells, 255);
    memo_->dist.assign(cells, 255);
    memo_->whole.assign(cells, 255);
    memo_->reusable.assign(n_, 0);
  }
}

// Whether the breadth-first distances d (255: unreached) to dst over the arcs `usable`
// marks stay what they were over those `was_usable` marked: no arc made usable is a
// shortcut (the old distances remain a lower bound), and every switch that lost an arc of
// a shortest way keeps another (each switch still has one: the old distances are reached).
template <class Usable, class WasUsable>
bool SwitchRoutes::keeps(const std::uint8_t* d, Usable&& usable, WasUsable&& was_usable) const {
  for (int a : changed_) {
    const bool now = usable(a), then = was_usable(a);
    if (now == then) continue;
    const int u = tail_[a], v = arcs_[a].first;
    if (now) {
      if (d[v] != 255 && (d[u] == 255 || d[u] > d[v] + 1)) return false;
    } else if (d[v] != 255 && d[u] == d[v] + 1) {
      bool other = false;
      for (int b = start_[u]; b < start_[u + 1] && !other; ++b)
        other = usable(b) && d[arcs_[b].first] != 255 && d[arcs_[b].first] + 1 == d[u];
      if (!other) return false;
    }
  }
  return true;
}

// Whether dst's distances over open links (and, where those leave a switch unreached, over
// open links and a tenant's link as the last hop) are what the memo holds. The wider
// searches read neither openness nor ownership. Then only the entries of the changed
// arcs' tails can differ: a switch's entry reads its own arcs and the distances.
bool SwitchRoutes::keeps_distances(int dst) const {
  if (!memo_->reusable[dst]) return false;
  const std::size_t row = std::size_t(dst) * n_;
  const std::uint8_t* S = &memo_->strict[row];
  const auto& was_open = memo_->open;
  const auto& was_last = memo_->last;
  if (!keeps(
          S, [&](int a) { return open_[a] != 0; }, [&](int a) { return was_open[a] != 0; }))
    return false;
  if (std::find(S, S + n_, 255) == S + n_) return true;  // the wider searches were not made
  auto into_dst = [&](int a) { return arcs_[a].first == dst; };
  return keeps(
      &memo_->dist[row], [&](int a) { return open_[a] || (into_dst(a) && last_[a]); },
      [&](int a) { return was_open[a] || (into_dst(a) && was_last[a]); });
}

void SwitchRoutes::route_tails(int dst) {
  const std::size_t row = std::size_t(dst) * n_;
  const std::uint8_t* S = &memo_->strict[row];
  const std::uint8_t* D = &memo_->dist[row];
  const std::uint8_t* W = &memo_->whole[row];
  auto s = [S](int x) { return S[x] == 255 ? -1 : int(S[x]); };
  auto d = [D](int x) { return D[x] == 255 ? -1 : int(D[x]); };
  auto w = [W](int x) { return W[x] == 255 ? -1 : int(W[x]); };
  for (int u : tails_) {
    if (u == dst) continue;
    std::uint8_t& entry = out_.row(u)[out_.num_hosts() + dst];
    if (s(u) > 0)
      entry = strict_choice(u, dst, s, w);
    else if (d(u) > 0)
      entry = open_choice(u, dst, d);
    // else: the wider searches' choice, which reads no arc's openness: unchanged
  }
}

// Destinations in batches, each computed into a buffer and then written row by row (one
// switch's entries for a batch are neighbours: a cache line, not one per destination).
// Batches are independent: they run on several threads when the machine has them, each
// writing its own destinations' entries, so the tables do not depend on the thread count.
int SwitchRoutes::run() {
  build_graph();
  prepare_memo();
  const int n = n_;
  constexpr int kBatch = 64;
  const int batches = (n + kBatch - 1) / kBatch;
  std::atomic<int> next_batch{0}, recomputed{0};
  auto worker = [&] {
    Scratch sc;
    for (auto* v : {&sc.strict, &sc.dist, &sc.dist_unblocked, &sc.dist_all, &sc.queue, &sc.whole})
      v->assign(n, 0);
    sc.ports.assign(static_cast<std::size_t>(kBatch) * n, 0);
    char computed[kBatch];
    for (int b; (b = next_batch.fetch_add(1)) < batches;) {
      const int first = b * kBatch, count = std::min(kBatch, n - first);
      for (int j = 0; j < count; ++j) {
        computed[j] = !(reuse_ && keeps_distances(first + j));
        recomputed += computed[j];
        if (computed[j])
          route_to(sc, first + j, &sc.ports[std::size_t(j) * n]);
        else
          route_tails(first + j);
      }
      for (int u = 0; u < n; ++u) {
        std::uint8_t* row = out_.row(u) + out_.num_hosts() + first;
        for (int j = 0; j < count; ++j)
          if (computed[j]) row[j] = sc.ports[std::size_t(j) * n + u];
      }
    }
  };
  util::run_on_threads(in_.thread_count(batches), worker);
  if (memo_) {
    memo_->open = open_;
    memo_->last = last_;
    memo_->valid = true;
  }
  return recomputed;
}

}  // namespace laas::routing::phases

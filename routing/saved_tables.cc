#include "routing/saved_tables.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <string_view>

namespace laas::routing {
namespace {

constexpr char kMagic[8] = {'L', 'A', 'A', 'S', 'T', 'B', 'L', '2'};
// Format 1 recorded no LID owners and no term: refused by name, so the log says why.
constexpr char kMagicV1[8] = {'L', 'A', 'A', 'S', 'T', 'B', 'L', '1'};
constexpr std::size_t kLidRecord = 2 + 8 + 8 + 1;

std::uint64_t fnv1a(const char* data, std::size_t n) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= 0x100000001b3ull;
  }
  return h;
}

template <class T>
void put(std::string& out, T value) {
  for (std::size_t i = 0; i < sizeof(T); ++i)
    out.push_back(static_cast<char>((static_cast<std::uint64_t>(value) >> (8 * i)) & 0xFF));
}

class Reader {
 public:
  Reader(const std::string& bytes, std::size_t end) : bytes_(bytes), end_(end) {}
  template <class T>
  T get(const char* what) {
    need(sizeof(T), what);
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i)
      v |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes_[pos_ + i])) << (8 * i);
    pos_ += sizeof(T);
    return static_cast<T>(v);
  }
  const char* take(std::size_t n, const char* what) {
    need(n, what);
    const char* p = bytes_.data() + pos_;
    pos_ += n;
    return p;
  }
  bool done() const { return pos_ == end_; }

 private:
  void need(std::size_t n, const char* what) const {
    if (end_ - pos_ < n) throw std::runtime_error(std::string("cut short in ") + what);
  }
  const std::string& bytes_;
  std::size_t end_;
  std::size_t pos_ = 0;
};

}  // namespace

namespace {

// The magic, the stamp and the LID owners: what both encoders write first.
void put_head(std::string& out, const SavedStamp& stamp, const LidOwners& lids) {
  out.append(kMagic, sizeof kMagic);
  put<std::uint64_t>(out, stamp.term);
  put<std::uint64_t>(out, static_cast<std::uint64_t>(stamp.written_at));
  put<std::uint32_t>(out, static_cast<std::uint32_t>(lids.size()));
  for (const auto& [lid, owner] : lids) {
    put<std::uint16_t>(out, lid);
    put<std::uint64_t>(out, owner.port);
    put<std::uint64_t>(out, owner.switch_guid);
    put<std::uint8_t>(out, static_cast<std::uint8_t>(owner.switch_port));
  }
}

void put_switch(std::string& out, topology::Guid guid, const std::vector<std::uint8_t>& lft,
                int ports, const std::vector<std::uint16_t>* drops) {
  put<std::uint64_t>(out, guid);
  put<std::uint32_t>(out, static_cast<std::uint32_t>(lft.size()));
  out.append(reinterpret_cast<const char*>(lft.data()), lft.size());
  put<std::uint16_t>(out, static_cast<std::uint16_t>(drops ? ports : 0));
  if (drops)
    for (std::uint16_t mask : *drops) put<std::uint16_t>(out, mask);
}

}  // namespace

std::string encode_saved_tables(const SavedStamp& stamp, const LidOwners& lids,
                                const std::vector<topology::Guid>& switch_guids,
                                const std::vector<std::vector<std::uint8_t>>& tables,
                                const Sl2VlTables& sl2vl) {
  std::string out;
  const std::size_t nodes = std::min(switch_guids.size(), tables.size());
  std::uint32_t count = 0;
  for (std::size_t i = 0; i < nodes; ++i) count += switch_guids[i] != 0;
  std::size_t bytes = sizeof kMagic + 8 + 8 + 4 + kLidRecord * lids.size() + 4 + 8;
  for (std::size_t i = 0; i < nodes; ++i)
    if (switch_guids[i] != 0)
      bytes +=
          8 + 4 + tables[i].size() + 2 + (i < sl2vl.drops.size() ? 2 * sl2vl.drops[i].size() : 0);
  out.reserve(bytes);
  put_head(out, stamp, lids);
  put<std::uint32_t>(out, count);
  for (std::size_t i = 0; i < nodes; ++i) {
    if (switch_guids[i] == 0) continue;
    const bool plan = i < sl2vl.drops.size() && sl2vl.has(static_cast<int>(i));
    put_switch(out, switch_guids[i], tables[i], plan ? sl2vl.ports[i] : 0,
               plan ? &sl2vl.drops[i] : nullptr);
  }
  put<std::uint64_t>(out, fnv1a(out.data(), out.size()));
  return out;
}

std::string encode_saved_tables(const SavedTables& saved) {
  std::string out;
  put_head(out, saved.stamp, saved.lids);
  put<std::uint32_t>(out, static_cast<std::uint32_t>(saved.switches.size()));
  std::map<topology::Guid, const SwitchTables*> sorted;  // the same tables, the same bytes
  for (const auto& [guid, t] : saved.switches) sorted.emplace(guid, &t);
  for (const auto& [guid, t] : sorted)
    put_switch(out, guid, t->lft, t->ports, t->ports > 0 ? &t->drops : nullptr);
  put<std::uint64_t>(out, fnv1a(out.data(), out.size()));
  return out;
}

std::size_t saved_tables_content_hash(const std::string& bytes) {
  // The magic and the term, then everything after the write time (the checksum included:
  // it covers the time, so it is left out too).
  constexpr std::size_t kTime = sizeof kMagic + 8, kAfter = kTime + 8;
  if (bytes.size() < kAfter + 8) return std::hash<std::string>()(bytes);
  const std::string_view all(bytes);
  const std::size_t head = std::hash<std::string_view>()(all.substr(0, kTime));
  const std::size_t rest =
      std::hash<std::string_view>()(all.substr(kAfter, bytes.size() - kAfter - 8));
  return head ^ (rest + 0x9e3779b97f4a7c15ull + (head << 6) + (head >> 2));
}

SavedTables decode_saved_tables(const std::string& bytes) {
  if (bytes.size() >= sizeof kMagicV1 && !std::memcmp(bytes.data(), kMagicV1, sizeof kMagicV1))
    throw std::runtime_error(
        "written in format 1 (LAASTBL1, before LID owners and terms were recorded): refused, "
        "as nothing in it tells a moved host from an unmoved one; the next routing run that "
        "sends tables writes format 2");
  if (bytes.size() < sizeof kMagic + 8 + 8 + 4 + 4 + 8 ||
      std::memcmp(bytes.data(), kMagic, sizeof kMagic))
    throw std::runtime_error("not a saved-tables file (no LAASTBL2 header)");
  const std::size_t body = bytes.size() - 8;
  Reader sum(bytes, bytes.size());
  sum.take(body, "the body");
  if (sum.get<std::uint64_t>("the checksum") != fnv1a(bytes.data(), body))
    throw std::runtime_error("checksum mismatch (the file is cut or damaged)");
  Reader in(bytes, body);
  in.take(sizeof kMagic, "the header");
  SavedTables saved;
  saved.stamp.term = in.get<std::uint64_t>("the term");
  saved.stamp.written_at = static_cast<std::int64_t>(in.get<std::uint64_t>("the write time"));
  const auto lids = in.get<std::uint32_t>("the LID count");
  for (std::uint32_t l = 0; l < lids; ++l) {
    const auto lid = in.get<std::uint16_t>("a LID");
    LidOwner owner;
    owner.port = in.get<std::uint64_t>("a LID's port GUID");
    owner.switch_guid = in.get<std::uint64_t>("a LID's switch GUID");
    owner.switch_port = in.get<std::uint8_t>("a LID's switch port");
    if (lid == 0 || !saved.lids.emplace(lid, owner).second)
      throw std::runtime_error("LID " + std::to_string(lid) + " listed twice or invalid");
  }
  const auto count = in.get<std::uint32_t>("the switch count");
  for (std::uint32_t s = 0; s < count; ++s) {
    const auto guid = in.get<std::uint64_t>("a switch GUID");
    SwitchTables t;
    const auto n = in.get<std::uint32_t>("a table length");
    const char* lft = in.take(n, "a forwarding table");
    t.lft.assign(reinterpret_cast<const std::uint8_t*>(lft),
                 reinterpret_cast<const std::uint8_t*>(lft) + n);
    t.ports = in.get<std::uint16_t>("a port count");
    t.drops.resize(static_cast<std::size_t>(t.ports) * t.ports);
    for (auto& mask : t.drops) mask = in.get<std::uint16_t>("an SL2VL plan");
    if (!saved.switches.emplace(guid, std::move(t)).second)
      throw std::runtime_error("switch GUID listed twice");
  }
  if (!in.done()) throw std::runtime_error("bytes left after the last switch");
  return saved;
}

std::string older_term_refusal(const SavedStamp& saved, std::uint64_t last_term) {
  if (last_term == 0 || saved.term >= last_term) return "";
  return "written in term " + std::to_string(saved.term) + ", but a master held term " +
         std::to_string(last_term) +
         " since: the tables it sent may differ (it was killed before writing them, or could "
         "not), so these are refused";
}

SavedTables restorable(const SavedTables& saved, const LidOwners& now, RestoreReport* report) {
  RestoreReport r;
  // keep[lid]: the LID belongs to the same port at the same place as when the tables were sent.
  std::size_t top = 0;
  for (const auto& sw : saved.switches) top = std::max(top, sw.second.lft.size());
  std::vector<char> keep(top, 0);
  std::set<topology::Lid> moved;
  for (const auto& [lid, owner] : saved.lids) {
    auto it = now.find(lid);
    if (it != now.end() && it->second == owner) {
      if (lid < top) keep[lid] = 1;
    } else {
      moved.insert(lid);
    }
  }
  for (const auto& entry : now)
    if (!saved.lids.count(entry.first)) moved.insert(entry.first);
  r.moved.assign(moved.begin(), moved.end());
  // Switch ports where the host port cabled then is not the one cabled now.
  std::map<std::pair<topology::Guid, int>, topology::Guid> then_at, now_at;
  for (const auto& entry : saved.lids)
    if (entry.second.switch_guid)
      then_at[{entry.second.switch_guid, entry.second.switch_port}] = entry.second.port;
  for (const auto& entry : now)
    if (entry.second.switch_guid)
      now_at[{entry.second.switch_guid, entry.second.switch_port}] = entry.second.port;
  std::map<topology::Guid, std::vector<int>> cut;
  for (const auto& [at, port] : then_at) {
    auto it = now_at.find(at);
    if (it == now_at.end() || it->second != port) cut[at.first].push_back(at.second);
  }
  for (const auto& [at, port] : now_at)
    if (!then_at.count(at)) cut[at.first].push_back(at.second);

  SavedTables out;
  out.stamp = saved.stamp;
  out.lids = now;  // what the tables given back fit
  for (const auto& [guid, sent] : saved.switches) {
    SwitchTables t = sent;
    for (std::size_t lid = 0; lid < t.lft.size(); ++lid)
      if (t.lft[lid] != 0xFF && !keep[lid]) {
        t.lft[lid] = 0xFF;
        ++r.entries_dropped;
      }
    auto c = cut.find(guid);
    if (c != cut.end() && t.ports > 0)
      for (int p : c->second) {
        if (p <= 0 || p >= t.ports) continue;
        for (int q = 0; q < t.ports; ++q) {
          t.drops[static_cast<std::size_t>(p) * t.ports + q] = kAllSls;
          t.drops[static_cast<std::size_t>(q) * t.ports + p] = kAllSls;
        }
        ++r.ports_cut;
      }
    out.switches.emplace(guid, std::move(t));
  }
  if (report) *report = std::move(r);
  return out;
}

}  // namespace laas::routing

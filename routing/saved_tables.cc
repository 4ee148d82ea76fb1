#include "routing/saved_tables.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace laas::routing {
namespace {

constexpr char kMagic[8] = {'L', 'A', 'A', 'S', 'T', 'B', 'L', '1'};

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

std::string encode_saved_tables(const std::vector<topology::Guid>& switch_guids,
                                const std::vector<std::vector<std::uint8_t>>& tables,
                                const Sl2VlTables& sl2vl) {
  std::string out(kMagic, sizeof kMagic);
  const std::size_t nodes = std::min(switch_guids.size(), tables.size());
  std::uint32_t count = 0;
  for (std::size_t i = 0; i < nodes; ++i) count += switch_guids[i] != 0;
  std::size_t bytes = out.size() + 4 + 8;
  for (std::size_t i = 0; i < nodes; ++i)
    if (switch_guids[i] != 0)
      bytes +=
          8 + 4 + tables[i].size() + 2 + (i < sl2vl.drops.size() ? 2 * sl2vl.drops[i].size() : 0);
  out.reserve(bytes);
  put<std::uint32_t>(out, count);
  for (std::size_t i = 0; i < nodes; ++i) {
    if (switch_guids[i] == 0) continue;
    put<std::uint64_t>(out, switch_guids[i]);
    put<std::uint32_t>(out, static_cast<std::uint32_t>(tables[i].size()));
    out.append(reinterpret_cast<const char*>(tables[i].data()), tables[i].size());
    const bool plan = i < sl2vl.drops.size() && sl2vl.has(static_cast<int>(i));
    const int ports = plan ? sl2vl.ports[i] : 0;
    put<std::uint16_t>(out, static_cast<std::uint16_t>(ports));
    if (plan)
      for (std::uint16_t mask : sl2vl.drops[i]) put<std::uint16_t>(out, mask);
  }
  put<std::uint64_t>(out, fnv1a(out.data(), out.size()));
  return out;
}

SavedTables decode_saved_tables(const std::string& bytes) {
  if (bytes.size() < sizeof kMagic + 4 + 8 || std::memcmp(bytes.data(), kMagic, sizeof kMagic))
    throw std::runtime_error("not a saved-tables file (no LAASTBL1 header)");
  const std::size_t body = bytes.size() - 8;
  Reader sum(bytes, bytes.size());
  sum.take(body, "the body");
  if (sum.get<std::uint64_t>("the checksum") != fnv1a(bytes.data(), body))
    throw std::runtime_error("checksum mismatch (the file is cut or damaged)");
  Reader in(bytes, body);
  in.take(sizeof kMagic, "the header");
  SavedTables saved;
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

}  // namespace laas::routing

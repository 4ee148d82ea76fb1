#include "topology/ibnetdiscover.h"

#include <cctype>
#include <fstream>
#include <map>
#include <optional>
#include <vector>

namespace laas::topology {
namespace {

struct PendingCable {
  int node;
  int port;
  std::string peer_id;
  int peer_port;
  int line;
};

class Reader {
 public:
  Reader(std::istream& in, std::string source) : in_(in), source_(std::move(source)) {}
  Fabric read();

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw ParseError(source_ + ":" + std::to_string(line_no_) + ": " + why);
  }
  // Cursor helpers over the current line.
  void skip_space() {
    while (pos_ < line_.size() && std::isspace(static_cast<unsigned char>(line_[pos_]))) ++pos_;
  }
  bool at(char c) {
    skip_space();
    return pos_ < line_.size() && line_[pos_] == c;
  }
  std::string quoted(const char* what) {
    skip_space();
    if (pos_ >= line_.size() || line_[pos_] != '"') fail(std::string("expected ") + what);
    const size_t end = line_.find('"', pos_ + 1);
    if (end == std::string::npos) fail(std::string("unterminated quote in ") + what);
    std::string s = line_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return s;
  }
  long number(const char* what, int base = 10) {
    skip_space();
    size_t end = pos_;
    while (end < line_.size() && std::isxdigit(static_cast<unsigned char>(line_[end])) &&
           (base == 16 || std::isdigit(static_cast<unsigned char>(line_[end]))))
      ++end;
    if (end == pos_) fail(std::string("expected ") + what);
    const std::string digits = line_.substr(pos_, end - pos_);
    if (digits.size() > (base == 16 ? 16u : 9u)) fail(std::string(what) + " is too long");
    pos_ = end;
    return static_cast<long>(std::stoull(digits, nullptr, base));
  }
  int bracket_port(const char* what) {
    if (!at('[')) fail(std::string("expected [") + what + "]");
    ++pos_;
    const long p = number(what);
    if (!at(']')) fail(std::string("expected ] after ") + what);
    ++pos_;
    if (p < 0 || p > 254) fail(std::string(what) + " " + std::to_string(p) + " is out of range");
    return static_cast<int>(p);
  }
  std::optional<Guid> paren_guid() {
    if (!at('(')) return std::nullopt;
    ++pos_;
    const Guid g = static_cast<Guid>(number("port GUID", 16));
    if (!at(')')) fail("expected ) after port GUID");
    ++pos_;
    return g;
  }
  // The comment part after '#', if any.
  std::string comment() {
    skip_space();
    if (pos_ < line_.size() && line_[pos_] == '#') return line_.substr(pos_ + 1);
    if (pos_ < line_.size()) fail("unexpected text '" + line_.substr(pos_) + "'");
    return "";
  }
  static std::optional<long> lid_in(const std::string& c) {
    size_t at = 0;
    while ((at = c.find("lid ", at)) != std::string::npos) {
      if (at == 0 || c[at - 1] == ' ' || c[at - 1] == '\t') {
        size_t b = at + 4, e = b;
        while (e < c.size() && std::isdigit(static_cast<unsigned char>(c[e]))) ++e;
        if (e > b && e - b < 7) return std::stol(c.substr(b, e - b));
      }
      at += 4;
    }
    return std::nullopt;
  }
  static std::optional<std::string> first_quoted(const std::string& c) {
    const size_t b = c.find('"');
    if (b == std::string::npos) return std::nullopt;
    const size_t e = c.find('"', b + 1);
    if (e == std::string::npos) return std::nullopt;
    return c.substr(b + 1, e - b - 1);
  }

  void header(const std::string& type);
  void port_line();

  std::istream& in_;
  std::string source_;
  std::string line_;
  size_t pos_ = 0;
  int line_no_ = 0;
  Fabric fabric_;
  std::map<std::string, int> by_id_;
  std::map<std::string, int> defined_at_;
  std::vector<PendingCable> cables_;
  struct Hint {
    std::string peer;
    int port;
    long lid;
  };
  std::vector<Hint> hints_;  // CA LIDs as seen from switch port lines
  std::optional<Guid> pending_guid_;
  int current_ = -1;
};

void Reader::header(const std::string& type) {
  FabricNode node;
  node.is_switch = type == "Switch";
  const long nports = number("port count");
  if (nports < 1 || nports > 254) fail("port count " + std::to_string(nports) + " is invalid");
  const std::string id = quoted("node id");
  if (id.empty()) fail("empty node id");
  if (by_id_.count(id))
    fail("node \"" + id + "\" is defined twice (first at line " + std::to_string(defined_at_[id]) +
         ")");
  const std::string c = comment();
  node.name = first_quoted(c).value_or(id);
  if (pending_guid_) {
    node.guid = *pending_guid_;
  } else if (id.size() > 2 && (id[0] == 'S' || id[0] == 'H' || id[0] == 'R') && id[1] == '-') {
    try {
      size_t used = 0;
      node.guid = std::stoull(id.substr(2), &used, 16);
      if (used != id.size() - 2) node.guid = 0;
    } catch (const std::exception&) {
      node.guid = 0;
    }
  }
  if (node.guid == 0) node.guid = 0x0002c90000000000ULL + fabric_.nodes.size() + 1;
  pending_guid_.reset();
  node.ports.resize(nports + 1);
  if (node.is_switch) {
    node.port_guid = node.guid;
    if (auto lid = lid_in(c)) node.ports[0].lid = static_cast<Lid>(*lid);
  }
  current_ = fabric_.add_node(std::move(node));
  by_id_[id] = current_;
  defined_at_[id] = line_no_;
}

void Reader::port_line() {
  if (current_ < 0) fail("port line before any Switch/Ca header");
  auto& node = fabric_.nodes[current_];
  const int port = bracket_port("port");
  if (port == 0 || port >= static_cast<int>(node.ports.size()))
    fail("port " + std::to_string(port) + " is outside 1.." +
         std::to_string(node.ports.size() - 1));
  const auto own_guid = paren_guid();
  const std::string peer = quoted("peer node id");
  const int peer_port = bracket_port("peer port");
  if (peer_port == 0) fail("peer port 0 cannot be cabled");
  paren_guid();  // the peer's port GUID, known from its own record
  const std::string c = comment();
  if (!node.is_switch) {
    if (own_guid && node.port_guid == 0) node.port_guid = *own_guid;
    if (own_guid) node.ports[port].guid = *own_guid;
    if (auto lid = lid_in(c)) node.ports[port].lid = static_cast<Lid>(*lid);
  }
  cables_.push_back({current_, port, peer, peer_port, line_no_});
  // A switch's port line names the peer CA's LID: keep it in case the CA record lacks one.
  if (node.is_switch)
    if (auto lid = lid_in(c)) hints_.push_back({peer, peer_port, *lid});
}

Fabric Reader::read() {
  while (std::getline(in_, line_)) {
    ++line_no_;
    if (!line_.empty() && line_.back() == '\r') line_.pop_back();
    pos_ = 0;
    skip_space();
    if (pos_ >= line_.size() || line_[pos_] == '#') continue;
    const std::string rest = line_.substr(pos_);
    if (rest[0] == '[') {
      port_line();
      continue;
    }
    const size_t eq = rest.find('=');
    const size_t sp = rest.find_first_of(" \t");
    if (eq != std::string::npos && (sp == std::string::npos || eq < sp)) {
      const std::string key = rest.substr(0, eq);
      if (key == "switchguid" || key == "caguid" || key == "rtguid") {
        pos_ += eq + 1;
        if (line_.compare(pos_, 2, "0x") == 0 || line_.compare(pos_, 2, "0X") == 0) pos_ += 2;
        pending_guid_ = static_cast<Guid>(number("GUID", 16));
      }
      continue;  // vendid=, devid=, sysimgguid=: not needed
    }
    const std::string word = rest.substr(0, sp);
    if (word == "Switch" || word == "Ca" || word == "Hca" || word == "Rt") {
      pos_ += word.size();
      header(word);
      continue;
    }
    if (word == "include" || word == "do")
      fail("ibsim '" + word + "' directives are not supported; flatten the file first");
    fail("unrecognized line '" + rest + "'");
  }
  if (fabric_.nodes.empty()) {
    line_no_ = 0;
    fail("no Switch or Ca records");
  }
  // Resolve cables.
  for (const auto& cab : cables_) {
    line_no_ = cab.line;
    auto it = by_id_.find(cab.peer_id);
    if (it == by_id_.end()) fail("peer \"" + cab.peer_id + "\" is never defined");
    const int peer = it->second;
    auto& pn = fabric_.nodes[peer];
    if (cab.peer_port >= static_cast<int>(pn.ports.size()))
      fail("peer \"" + cab.peer_id + "\" has no port " + std::to_string(cab.peer_port));
    auto& mine = fabric_.nodes[cab.node].ports[cab.port];
    auto& theirs = pn.ports[cab.peer_port];
    if (mine.peer_node >= 0 && (mine.peer_node != peer || mine.peer_port != cab.peer_port))
      fail("port " + std::to_string(cab.port) + " is listed with a different peer elsewhere");
    if (theirs.peer_node >= 0 && (theirs.peer_node != cab.node || theirs.peer_port != cab.port))
      fail("\"" + cab.peer_id + "\" port " + std::to_string(cab.peer_port) +
           " is listed with a different peer elsewhere");
    fabric_.connect(cab.node, cab.port, peer, cab.peer_port);
  }
  for (const auto& hint : hints_) {
    auto it = by_id_.find(hint.peer);
    if (it == by_id_.end()) continue;
    auto& pn = fabric_.nodes[it->second];
    if (pn.is_switch || hint.port >= static_cast<int>(pn.ports.size())) continue;
    if (pn.ports[hint.port].lid == 0) pn.ports[hint.port].lid = static_cast<Lid>(hint.lid);
  }
  // CAs without a port GUID in the file (ibsim net files): node GUID + port number.
  for (auto& n : fabric_.nodes) {
    if (n.is_switch || n.port_guid != 0) continue;
    for (int p = 1; p < static_cast<int>(n.ports.size()); ++p)
      if (n.ports[p].peer_node >= 0) {
        n.port_guid = n.guid + static_cast<Guid>(p);
        break;
      }
  }
  split_multiport_cas(fabric_);
  return std::move(fabric_);
}

}  // namespace

Fabric read_ibnetdiscover(std::istream& in, const std::string& source) {
  return Reader(in, source).read();
}

Fabric read_ibnetdiscover_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ParseError(path + ": cannot open");
  return read_ibnetdiscover(in, path);
}

}  // namespace laas::topology

// What the readers of switch dumps (ibroute / dump_fts for unicast and multicast tables) share:
// the text helpers, the switch part of a block header, and the mapping of dumped switches onto
// a fabric's nodes.
#pragma once

#include <istream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "routing/ibroute.h"
#include "topology/fabric.h"
#include "util/text.h"

namespace laas::routing::dump {

using util::trim;
bool starts_with(const std::string& s, const char* prefix);
// An unsigned number in base 16 ("0x..." required) or 10; false if the text is not entirely one.
bool parse_number(const std::string& text, int base, unsigned long long* out);

// A dump read line by line: the raw line (a trailing CR dropped), its trimmed text and its
// number; errors name the source, the line number and the raw line.
class DumpLines {
 public:
  DumpLines(std::istream& in, std::string source) : in_(in), source_(std::move(source)) {}
  bool next();  // false at the end of the input
  const std::string& raw() const { return raw_; }
  const std::string& line() const { return line_; }
  int number() const { return number_; }
  [[noreturn]] void fail(const std::string& why) const;

 private:
  std::istream& in_;
  std::string source_, raw_, line_;
  int number_ = 0;
};

struct SwitchHeader {
  topology::Guid guid = 0;
  topology::Lid lid = 0;  // 0 when the switch is addressed by directed route (dump_fts)
  std::string name;       // the node description in parentheses, may be empty
};

// Reads "... of switch Lid 1 guid 0x0000000000200000 (SW_L2_0):" (or "of switch DR path ...
// guid ..."), from `of_switch`, the position of " of switch " in `line`. Returns why it is not
// such a header, or an empty string.
std::string parse_switch_header(const std::string& line, std::size_t of_switch, SwitchHeader* out);

// Fabric nodes of dumped switches, by node or port-0 GUID; each switch may be dumped once.
class DumpedSwitches {
 public:
  explicit DumpedSwitches(const topology::Fabric& fabric);
  // The node of the table printed at `line` under `guid`; throws DumpError naming `what` (e.g.
  // "table") and the line when the GUID is no switch of the fabric or was dumped before.
  int claim(topology::Guid guid, int line, const std::string& what);

 private:
  const topology::Fabric& fabric_;
  std::unordered_map<topology::Guid, int> by_guid_;
  std::vector<char> seen_;
};

}  // namespace laas::routing::dump

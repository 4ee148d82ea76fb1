// The first-hop drop: SL2VL tables that send every SL to VL15 (the switch discards the packet)
// for each (input port, output port) pair of a switch where the input carries one owner's
// traffic and the output belongs to another tenant. A pure function of the fabric, the tree's
// embedding, the forwarding tables and who owns what; the OpenSM glue only copies the verdicts
// into OpenSM's update_sl2vl callback, and the audit compares them with tables read back.
//
// Port owners (per switch, per physical port):
//  - a tenant: its hosts' leaf ports and the links it holds;
//  - free: free hosts' leaf ports (all free hosts are one owner);
//  - open: switch-to-switch links no tenant holds (management and free traffic ride on them);
//  - management: port 0 of every switch and the leaf ports of management hosts (trusted sources).
//
// Policy (docs/architecture.md, "First-hop drop"):
//  0. output a free host's leaf port, input another host's leaf port that is not management:
//     drop (the free pool is closed; traffic from above is management's, as leaves
//     without management hosts have no route to free hosts);
//  1. output owned by tenant Y, input neither Y nor management: drop (every SL -> VL15), unless
//  2. the pair is an exemption: a hop where management traffic addressed to Y's hosts leaves an
//     open link for one of Y's ports. Such a pair is safe because the only packets with a
//     destination of Y that the tables ever put on an open link come from management ports:
//     leaves route Y's hosts only if Y or management hosts sit on them (and then over Y's links
//     or over the management up-links of rule 3);
//     Likewise a hop where management traffic addressed to a switch leaves a switch-to-switch
//     link for a tenant's link (the last hops into a switch whose cables are all held): a
//     tenant's links never carry another tenant's host destinations, so such a pair lets in
//     only management, switch-addressed and the tenant's own packets;
//  3. at a management leaf (a management host or the SM on it), the open up-links that carry
//     management traffic to tenants ("management up-links") drop everything that does not come
//     from a management port, so no other host on that leaf can borrow them.
//  4. input the port of an attached host nobody listed (an adapter on a spare switch port,
//     ClosedAttached in routing.h): drop towards every output but a management host's port.
//     Such a port is a free host's port for rules 0 and 1 as well, so its traffic dies at its
//     first switch and only management reaches it.
#pragma once

#include <cstdint>
#include <istream>
#include <stdexcept>
#include <string>
#include <vector>

#include "routing/routing.h"

namespace laas::routing {

enum class PortClass : std::uint8_t { kNone, kManagement, kFreeHost, kOpenLink, kTenant };

struct PortOwner {
  PortClass cls = PortClass::kNone;
  int tenant = -1;    // for kTenant
  bool host = false;  // a host's leaf port (not compared: the owner is who, not what)
  bool operator==(const PortOwner& o) const { return cls == o.cls && tenant == o.tenant; }
};

// Per fabric node: for each (in, out) pair the SLs that map to VL15, as a 16-bit mask
// (bit s set: SL s is dropped). Empty rows for nodes that are not switches or were not read.
struct Sl2VlTables {
  std::vector<int> ports;                         // [node] number of ports including port 0
  std::vector<std::vector<std::uint16_t>> drops;  // [node][in * ports + out]

  explicit Sl2VlTables(std::size_t nodes = 0) : ports(nodes, 0), drops(nodes) {}
  void init_node(int node, int num_ports) {
    ports[node] = num_ports;
    drops[node].assign(static_cast<std::size_t>(num_ports) * num_ports, 0);
  }
  bool has(int node) const { return !drops[node].empty(); }
  std::uint16_t mask(int node, int in, int out) const {
    const int n = ports[node];
    if (drops[node].empty() || in < 0 || out < 0 || in >= n || out >= n) return 0;
    return drops[node][static_cast<std::size_t>(in) * n + out];
  }
  void set(int node, int in, int out, std::uint16_t mask) {
    drops[node][static_cast<std::size_t>(in) * ports[node] + out] = mask;
  }
};

constexpr std::uint16_t kAllSls = 0xFFFF;
constexpr std::uint8_t kDropVl = 15;

struct Sl2VlInput {
  const topology::Fabric* fabric = nullptr;
  const topology::Embedding* embedding = nullptr;
  const FatTree* tree = nullptr;
  const LidTables* tables = nullptr;
  std::vector<allocator::Placement> tenants;  // tenant index = position
  std::vector<HostId> management_hosts;
  std::vector<int> management_nodes;  // fabric nodes that source management traffic (the SM's)
  // Tenants' slots holding an unaccepted port GUID: their leaf ports are free host
  // ports whatever the placements say, so the newcomer's packets die at its leaf (rule 1) and
  // no other host's enter its port (rule 0).
  std::vector<HostId> unaccepted_hosts{};
  // Fabric nodes of the attached hosts nobody listed (rule 4).
  std::vector<int> closed_attached{};
};

struct Exemption {
  int node = -1;
  int in_port = 0;
  int out_port = 0;
  int tenant = -1;  // whose port the pair enters
};

struct Sl2VlPlan {
  Sl2VlTables tables;                           // kAllSls where dropped, 0 elsewhere
  std::vector<std::vector<PortOwner>> owners;   // [node][port]
  std::vector<Exemption> exemptions;            // rule 2, sorted by (node, in, out)
  std::vector<std::pair<int, int>> mgmt_links;  // rule 3: (leaf node, up-port)
  long dropped_pairs = 0;
};

// Who owns every port of every switch of the tree (kNone outside it).
std::vector<std::vector<PortOwner>> port_owners(const Sl2VlInput& in);

// Throws std::invalid_argument when pointers are missing or sizes do not match.
Sl2VlPlan plan_sl2vl(const Sl2VlInput& in);

// A malformed SL2VL dump; what() is "<source>:<line>: <reason>: <the line>".
class Sl2VlDumpError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reads `smpquery sl2vl LID OUTPORT` output (and laas-sl2vl-dump's, the same format): blocks
// "# SL2VL table: Lid N" followed by "ports: in I, out O: | v| v|..." lines. Switches are found
// by LID in `fabric`; entries of unknown LIDs, or lines that do not parse, throw.
Sl2VlTables parse_sl2vl(std::istream& in, const topology::Fabric& fabric,
                        const std::string& source = "<input>");

// The same format for one switch and one output port (tests; the inverse of the parser).
std::string format_sl2vl(const topology::Fabric& fabric, int node, int out_port,
                         const Sl2VlTables& tables);

}  // namespace laas::routing

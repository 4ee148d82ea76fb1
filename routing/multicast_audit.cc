// The multicast audit: every group found in the switches' MFTs is classified by the hosts its
// tables deliver to, then its links are checked against the policy of multicast.h and its
// packets are flooded through the tables from every receiver.
#include <algorithm>
#include <cstdio>
#include <set>
#include <stdexcept>

#include "routing/multicast.h"

namespace laas::routing {

const char* to_string(McastFindingKind kind) {
  switch (kind) {
    case McastFindingKind::kEscapes:
      return "mcast-tenant-group-escapes";
    case McastFindingKind::kForeignLink:
      return "mcast-group-on-foreign-tenant-link";
    case McastFindingKind::kLoop:
      return "mcast-loop";
    case McastFindingKind::kUnreachable:
      return "mcast-receiver-unreachable";
    case McastFindingKind::kNonMember:
      return "mcast-non-member-receives";
    case McastFindingKind::kExemption:
      return "mcast-management-exemption";
  }
  return "unknown";
}

bool is_violation(McastFindingKind kind) { return kind != McastFindingKind::kExemption; }

long McastAuditReport::violations() const {
  long total = 0;
  for (const auto& [name, n] : counts)
    if (name != to_string(McastFindingKind::kExemption)) total += n;
  return total;
}

long McastAuditReport::count(McastFindingKind kind) const {
  auto it = counts.find(to_string(kind));
  return it == counts.end() ? 0 : it->second;
}

namespace {

constexpr int kFreeOwner = -1;
constexpr int kManagementOwner = -2;

class McastAuditor {
 public:
  McastAuditor(const AuditInput& in, const Mfts& mfts, const McastMembership* membership,
               int max_findings, McastAuditReport& rep)
      : in_(in),
        f_(*in.fabric),
        emb_(*in.embedding),
        t_(*in.tree),
        mfts_(mfts),
        membership_(membership),
        max_(max_findings),
        rep_(rep) {
    prepare();
  }

  void run() {
    std::set<std::uint16_t> mlids;
    for (const auto& mft : mfts_)
      for (const auto& [mlid, ports] : mft)
        if (!ports.empty()) mlids.insert(mlid);
    for (std::uint16_t mlid : mlids) group(mlid);
  }

 private:
  void prepare() {
    if (static_cast<int>(emb_.host_node.size()) != t_.num_hosts() ||
        static_cast<int>(emb_.switch_node.size()) != t_.height())
      throw std::invalid_argument("multicast audit: the embedding does not match the tree");
    if (mfts_.size() != f_.nodes.size())
      throw std::invalid_argument("multicast audit: one table slot per fabric node is expected");
    port_link_.assign(f_.nodes.size(), {});
    port_host_.assign(f_.nodes.size(), {});
    for (std::size_t n = 0; n < f_.nodes.size(); ++n) {
      port_link_[n].assign(f_.nodes[n].ports.size(), -1);
      port_host_[n].assign(f_.nodes[n].ports.size(), -1);
    }
    for (LinkId l = 0; l < t_.total_links(); ++l)
      for (const auto& ref : {t_.link_lower(l), t_.link_upper(l)}) {
        const int node = emb_.switch_node[ref.level - 1][ref.index];
        if (node < 0) continue;
        const int port = emb_.port_map[ref.level - 1][ref.index][ref.port];
        if (port >= 0 && port < static_cast<int>(port_link_[node].size()))
          port_link_[node][port] = l;
      }
    for (HostId h = 0; h < t_.num_hosts(); ++h) {
      const auto ref = t_.host_peer(h);
      const int node = emb_.switch_node[0][ref.index];
      if (node < 0) continue;
      const int port = emb_.port_map[0][ref.index][ref.port];
      if (port >= 0 && port < static_cast<int>(port_host_[node].size())) port_host_[node][port] = h;
    }
    owner_.assign(t_.total_links(), kFreeOwner);
    host_class_.assign(t_.num_hosts(), kFreeOwner);
    for (int ti = 0; ti < static_cast<int>(in_.tenants.size()); ++ti) {
      for (LinkId l : in_.tenants[ti].placement.links)
        if (l >= 0 && l < t_.total_links()) owner_[l] = ti;
      for (HostId h : in_.tenants[ti].placement.hosts)
        if (h >= 0 && h < t_.num_hosts()) host_class_[h] = ti;
    }
    for (HostId h : in_.management_hosts)
      if (h >= 0 && h < t_.num_hosts()) host_class_[h] = kManagementOwner;
    for (int node : in_.management_nodes) {
      const auto [level, index] = emb_.node_model.at(node);
      if (level == 0) host_class_[index] = kManagementOwner;
    }
  }

  void add(McastFindingKind kind, std::uint16_t mlid, const std::string& tenant,
           const std::string& where, const std::string& detail) {
    long& n = rep_.counts[to_string(kind)];
    ++n;
    if (n <= max_) rep_.findings.push_back({kind, mlid, tenant, where, detail});
  }

  const std::vector<int>* ports_of(int node, std::uint16_t mlid) const {
    const auto& mft = mfts_[node];
    auto it = mft.find(mlid);
    return it == mft.end() ? nullptr : &it->second;
  }

  std::string where(int node, int port) const {
    return f_.nodes[node].name + " port " + std::to_string(port);
  }

  std::string link_owner_name(LinkId l) const {
    return owner_[l] == kFreeOwner ? "free" : "tenant " + in_.tenants[owner_[l]].name;
  }

  void group(std::uint16_t mlid) {
    McastGroupReport g;
    g.mlid = mlid;
    std::vector<HostId> receivers;
    std::vector<std::pair<int, int>> used;  // (node, port) on switch-to-switch links
    for (std::size_t n = 0; n < f_.nodes.size(); ++n) {
      const auto* ports = ports_of(static_cast<int>(n), mlid);
      if (!ports || ports->empty()) continue;
      ++g.switches;
      for (int p : *ports) {
        if (p <= 0 || p >= static_cast<int>(port_link_[n].size())) continue;
        if (port_host_[n][p] >= 0) receivers.push_back(port_host_[n][p]);
        if (port_link_[n][p] >= 0) used.push_back({static_cast<int>(n), p});
      }
    }
    std::sort(receivers.begin(), receivers.end());
    receivers.erase(std::unique(receivers.begin(), receivers.end()), receivers.end());
    g.receivers = static_cast<int>(receivers.size());
    std::set<int> tenants;
    bool free_rx = false, mgmt_rx = false;
    for (HostId h : receivers) {
      if (host_class_[h] >= 0) tenants.insert(host_class_[h]);
      free_rx |= host_class_[h] == kFreeOwner;
      mgmt_rx |= host_class_[h] == kManagementOwner;
    }
    const bool one_tenant = tenants.size() == 1 && !free_rx;
    if (one_tenant) {
      g.cls = mgmt_rx ? "tenant+management" : "tenant";
      g.tenant = in_.tenants[*tenants.begin()].name;
    } else if (tenants.empty() && !free_rx) {
      g.cls = mgmt_rx ? "management" : "none";
    } else {
      g.cls = "shared";
    }
    std::set<LinkId> links;
    for (const auto& [node, port] : used) {
      const LinkId l = port_link_[node][port];
      if (!links.insert(l).second) continue;  // judged at its other end already
      const int o = owner_[l];
      if (one_tenant) {
        const int ti = *tenants.begin();
        if (o == ti) continue;
        if (o == kFreeOwner && mgmt_rx) {
          add(McastFindingKind::kExemption, mlid, g.tenant, where(node, port),
              "tenant " + g.tenant + "'s group reaches a management host over a free link");
          continue;
        }
        add(McastFindingKind::kEscapes, mlid, g.tenant, where(node, port),
            "tenant " + g.tenant + "'s group is forwarded onto a " + link_owner_name(l) + " link");
      } else if (o != kFreeOwner) {
        if (tenants.count(o))
          add(McastFindingKind::kExemption, mlid, in_.tenants[o].name, where(node, port),
              g.cls + " group on a link of member tenant " + in_.tenants[o].name);
        else
          add(McastFindingKind::kForeignLink, mlid, in_.tenants[o].name, where(node, port),
              g.cls + " group is forwarded onto tenant " + in_.tenants[o].name +
                  "'s link, and none of its hosts receive the group");
      }
    }
    g.links = static_cast<int>(links.size());
    if (membership_) {
      auto it = membership_->find(mlid);
      const std::vector<HostId> none;
      const auto& members = it == membership_->end() ? none : it->second;
      for (HostId h : receivers)
        if (std::find(members.begin(), members.end(), h) == members.end())
          add(McastFindingKind::kNonMember, mlid, "", t_.host_name(h),
              "receives the group without having joined it");
    }
    flood(mlid, receivers);
    rep_.groups.push_back(std::move(g));
  }

  // Follows the group's packets from each receiver (as a sender) through the tables.
  void flood(std::uint16_t mlid, const std::vector<HostId>& receivers) {
    bool loop_reported = false;
    for (HostId src : receivers) {
      const auto ref = t_.host_peer(src);
      const int leaf = emb_.switch_node[0][ref.index];
      const int in_port = emb_.port_map[0][ref.index][ref.port];
      std::vector<char> seen(f_.nodes.size(), 0);
      std::set<HostId> got;
      std::vector<std::pair<int, int>> queue{{leaf, in_port}};
      bool loop = false;
      for (std::size_t head = 0; head < queue.size() && !loop; ++head) {
        const auto [node, from] = queue[head];
        if (seen[node]) {
          loop = true;
          if (!loop_reported)
            add(McastFindingKind::kLoop, mlid, "", f_.nodes[node].name,
                "a packet from " + t_.host_name(src) + " reaches this switch twice");
          loop_reported = true;
          break;
        }
        seen[node] = 1;
        const auto* ports = ports_of(node, mlid);
        if (!ports) continue;
        for (int p : *ports) {
          if (p == from || p <= 0 || p >= static_cast<int>(f_.nodes[node].ports.size())) continue;
          const auto& fp = f_.nodes[node].ports[p];
          if (fp.peer_node < 0) continue;
          if (!f_.nodes[fp.peer_node].is_switch) {
            if (p < static_cast<int>(port_host_[node].size()) && port_host_[node][p] >= 0)
              got.insert(port_host_[node][p]);
            continue;
          }
          queue.push_back({fp.peer_node, fp.peer_port});
        }
      }
      if (loop) continue;
      int missed = 0;
      HostId example = -1;
      for (HostId h : receivers)
        if (h != src && !got.count(h)) {
          if (example < 0) example = h;
          ++missed;
        }
      if (missed > 0)
        add(McastFindingKind::kUnreachable, mlid, "", t_.host_name(src),
            "its packets miss " + std::to_string(missed) + " receiver(s), e.g. " +
                t_.host_name(example));
    }
  }

  const AuditInput& in_;
  const topology::Fabric& f_;
  const topology::Embedding& emb_;
  const FatTree& t_;
  const Mfts& mfts_;
  const McastMembership* membership_;
  const int max_;
  McastAuditReport& rep_;
  std::vector<std::vector<LinkId>> port_link_;
  std::vector<std::vector<HostId>> port_host_;
  std::vector<int> owner_;
  std::vector<int> host_class_;
};

std::string hex_mlid(std::uint16_t mlid) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%04x", mlid);
  return buf;
}

}  // namespace

McastAuditReport audit_multicast(const AuditInput& input, const Mfts& mfts,
                                 const McastMembership* membership, int max_findings_per_kind) {
  if (!input.fabric || !input.embedding || !input.tree)
    throw std::invalid_argument("multicast audit: fabric, embedding and tree are required");
  McastAuditReport report;
  McastAuditor(input, mfts, membership, max_findings_per_kind, report).run();
  return report;
}

nlohmann::json to_json(const McastAuditReport& report) {
  nlohmann::json j;
  j["counts"] = report.counts;
  j["violations"] = report.violations();
  j["findings"] = nlohmann::json::array();
  for (const auto& f : report.findings)
    j["findings"].push_back({{"kind", to_string(f.kind)},
                             {"violation", is_violation(f.kind)},
                             {"mlid", hex_mlid(f.mlid)},
                             {"tenant", f.tenant},
                             {"where", f.where},
                             {"detail", f.detail}});
  j["groups"] = nlohmann::json::array();
  for (const auto& g : report.groups)
    j["groups"].push_back({{"mlid", hex_mlid(g.mlid)},
                           {"class", g.cls},
                           {"tenant", g.tenant},
                           {"receivers", g.receivers},
                           {"switches", g.switches},
                           {"links", g.links}});
  return j;
}

}  // namespace laas::routing

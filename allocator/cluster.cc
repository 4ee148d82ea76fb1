#include "allocator/cluster.h"

#include <algorithm>
#include <cctype>

#include "check/checker.h"

namespace laas::allocator {

std::string validate_tenant_name(const std::string& name) {
  if (name.empty()) return "tenant name is empty";
  if (name.size() > 64)
    return "tenant name is " + std::to_string(name.size()) + " characters long; the limit is 64";
  for (unsigned char c : name)
    if (!(std::isalnum(c) || c == '_' || c == '.' || c == '-'))
      return "tenant name '" + name + "' has the character '" + std::string(1, c) +
             "'; use letters, digits, '_', '.' and '-'";
  return "";
}

Cluster::Cluster(const FatTree& tree, std::unique_ptr<Placer> placer)
    : tree_(tree), state_(tree_), placer_(std::move(placer)) {}

Outcome Cluster::validate_new(const std::string& name, int hosts) const {
  if (auto why = validate_tenant_name(name); !why.empty()) return {Status::kBadRequest, why};
  if (tenants_.count(name)) return {Status::kDuplicate, "tenant '" + name + "' already exists"};
  if (hosts <= 0)
    return {Status::kBadRequest, "tenant '" + name + "': number of hosts must be at least 1, got " +
                                     std::to_string(hosts)};
  if (hosts > tree().num_hosts())
    return {Status::kBadRequest, "tenant '" + name + "': " + std::to_string(hosts) +
                                     " hosts requested but the fabric has only " +
                                     std::to_string(tree().num_hosts())};
  return {};
}

Outcome Cluster::plan(const std::string& name, int hosts, Placement* out) const {
  if (auto v = validate_new(name, hosts); !v.ok()) return v;
  auto result = placer_->place(state_, hosts);
  if (!result.placement)
    return {Status::kRefused, "tenant '" + name + "' of " + std::to_string(hosts) +
                                  " hosts refused: " + result.reason};
  if (out) *out = std::move(*result.placement);
  return {};
}

TenantIndex Cluster::next_index() {
  if (!free_indices_.empty()) {
    const TenantIndex i = free_indices_.back();
    free_indices_.pop_back();
    return i;
  }
  return next_index_++;
}

Outcome Cluster::add(const std::string& name, int hosts) {
  Placement placement;
  if (auto v = plan(name, hosts, &placement); !v.ok()) return v;
  Tenant t{name, hosts, next_index(), std::move(placement)};
  state_.assign(t.index, t.placement);
  auto& stored = tenants_[name] = std::move(t);
  return {Status::kOk,
          "tenant '" + name + "' placed: " + std::to_string(stored.placement.hosts.size()) +
              " hosts, " + std::to_string(stored.placement.links.size()) + " links, shape " +
              stored.placement.shape.text(),
          &stored};
}

Outcome Cluster::add_explicit(const std::string& name, int requested, const Placement& placement) {
  if (auto v = validate_new(name, requested); !v.ok()) return v;
  if (static_cast<int>(placement.hosts.size()) < requested)
    return {Status::kBadRequest, "tenant '" + name + "': placement holds " +
                                     std::to_string(placement.hosts.size()) + " hosts, " +
                                     std::to_string(requested) + " requested"};
  std::string why;
  if (!state_.can_assign(placement, &why))
    return {Status::kRefused, "tenant '" + name + "': " + why};
  if (placer_->isolates()) {
    check::TenantView view{name, placement.hosts, placement.links, true};
    auto violations = check::check_tenant_shape(tree(), view);
    if (!violations.empty())
      return {Status::kRefused, "tenant '" + name + "' violates the LaaS conditions: " +
                                    check::to_string(violations.front())};
  }
  Tenant t{name, requested, next_index(), placement};
  if (t.placement.shape.leaves.d == 0) t.placement.shape = shape_of(tree(), t.placement.hosts);
  std::sort(t.placement.hosts.begin(), t.placement.hosts.end());
  std::sort(t.placement.links.begin(), t.placement.links.end());
  state_.assign(t.index, t.placement);
  auto& stored = tenants_[name] = std::move(t);
  return {Status::kOk,
          "tenant '" + name + "' placed: " + std::to_string(stored.placement.hosts.size()) +
              " hosts, " + std::to_string(stored.placement.links.size()) + " links, shape " +
              stored.placement.shape.text(),
          &stored};
}

Outcome Cluster::add_on_hosts(const std::string& name, const std::vector<HostId>& hosts,
                              bool dry_run, Placement* out) {
  if (auto v = validate_new(name, static_cast<int>(hosts.size())); !v.ok()) return v;
  auto result = place_on_hosts(state_, hosts);
  if (!result.placement)
    return {Status::kRefused, "tenant '" + name + "' on the given hosts refused: " + result.reason};
  if (out) *out = *result.placement;
  if (dry_run) return {};
  return add_explicit(name, static_cast<int>(hosts.size()), *result.placement);
}

Outcome Cluster::remove(const std::string& name) {
  auto it = tenants_.find(name);
  if (it == tenants_.end()) return {Status::kNotFound, "no tenant named '" + name + "'"};
  state_.release(it->second.index, it->second.placement);
  free_indices_.push_back(it->second.index);
  tenants_.erase(it);
  return {Status::kOk, "tenant '" + name + "' removed"};
}

std::vector<HostId> Cluster::reserve(const std::vector<HostId>& hosts) {
  std::vector<HostId> skipped;
  Placement p;
  for (HostId h : hosts) {
    if (h < 0 || h >= tree().num_hosts()) continue;
    if (state_.host_owner(h) == kFree)
      p.hosts.push_back(h);
    else if (state_.host_owner(h) != kReserved)
      skipped.push_back(h);
  }
  state_.assign(kReserved, p);
  return skipped;
}

const Tenant* Cluster::find(const std::string& name) const {
  auto it = tenants_.find(name);
  return it == tenants_.end() ? nullptr : &it->second;
}

}  // namespace laas::allocator

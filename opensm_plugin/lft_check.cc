// clang-format off
#include <opensm/osm_config.h>  // must come first: it fixes the layout of osm_opensm_t
#include <complib/cl_passivelock.h>
#define delete delete_cb
#include <opensm/osm_madw.h>
#include <opensm/osm_node.h>
#include <opensm/osm_opensm.h>
#include <opensm/osm_pkey.h>
#include <opensm/osm_port.h>
#include <opensm/osm_sm.h>
#include <opensm/osm_subnet.h>
#include <opensm/osm_switch.h>
#undef delete
// clang-format on

#include "opensm_plugin/lft_check.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

namespace laas::plugin {

namespace {

constexpr auto kTick = std::chrono::milliseconds(100);
// At most one re-route a second for what the reads found: a fabric rewritten everywhere (a
// second master) is repaired in a few runs, not one routing run per 100-ms batch of reads.
constexpr auto kRepairGap = std::chrono::seconds(1);
// A port read is compared this long after it went out, once OpenSM has no SMP outstanding: its
// answer has been handed to OpenSM's receiver, which stores it under OpenSM's lock.
constexpr auto kCompareAfter = std::chrono::milliseconds(300);
// A sweep that started and never said it was done (a routing failure) holds port reads no
// longer than this.
constexpr auto kSweepHold = std::chrono::seconds(60);

using service::BlockRead;
using service::PortTable;
using service::TableKind;

// The blocks OpenSM sends a switch (set_lft_block): those holding LIDs up to its highest in
// use, within the table OpenSM keeps for it.
int blocks_of(const osm_switch_t* sw) {
  if (!sw->lft || !sw->new_lft) return 0;
  return static_cast<int>(
      std::min<size_t>(sw->max_lid_ho / IB_SMP_DATA_SIZE + 1, sw->lft_size / IB_SMP_DATA_SIZE));
}

std::string name_of(const osm_node_t* node) {
  if (node->print_desc && *node->print_desc) return node->print_desc;
  const auto* d = reinterpret_cast<const char*>(node->node_desc.description);
  return std::string(d, strnlen(d, IB_NODE_DESCRIPTION_SIZE));
}

// A port this SM has brought up: a read of its tables gets an answer.
bool port_up(const osm_physp_t* p) {
  return p && osm_physp_is_valid(p) && osm_physp_get_port_state(p) != IB_LINK_DOWN;
}

// The SL2VL pairs of a switch where this SM drops every SL (out port, in port).
std::vector<PortTable> sl2vl_reads(const osm_switch_t* sw, const LftCheck::Drops& drops) {
  std::vector<PortTable> out;
  if (!drops) return out;
  const std::uint64_t guid = cl_ntoh64(osm_node_get_node_guid(sw->p_node));
  const int ports = static_cast<int>(osm_node_get_num_physp(sw->p_node));
  for (int o = 1; o < ports; ++o) {
    if (!port_up(osm_node_get_physp_ptr(sw->p_node, static_cast<uint8_t>(o)))) continue;
    for (int i = 1; i < ports; ++i)
      if (i != o && drops(guid, i, o)) out.push_back({TableKind::kSl2Vl, o, i});
  }
  return out;
}

// A host's tables: each port's PortInfo and the P_Key blocks OpenSM's P_Key manager keeps.
std::vector<PortTable> host_reads(osm_node_t* node) {
  std::vector<PortTable> out;
  const int ports = static_cast<int>(osm_node_get_num_physp(node));
  for (int p = 1; p < ports; ++p) {
    osm_physp_t* physp = osm_node_get_physp_ptr(node, static_cast<uint8_t>(p));
    if (!port_up(physp)) continue;
    out.push_back({TableKind::kPortInfo, p, 0});
    const int blocks = osm_pkey_tbl_get_num_blocks(&physp->pkeys);
    for (int b = 0; b < blocks; ++b) out.push_back({TableKind::kPKey, p, b});
  }
  return out;
}

// The receiver of the answer stores it as it stores a Set's answer (see lft_check.h).
template <typename Context>
void as_if_set(Context* c, ib_net64_t node_guid, ib_net64_t port_guid) {
  c->node_guid = node_guid;
  c->port_guid = port_guid;
  c->set_method = TRUE;
}

bool all_dropped(const ib_slvl_table_t* t) {
  for (uint8_t sl = 0; sl < 16; ++sl)
    if (ib_slvl_table_get(t, sl) != 15) return false;
  return true;
}

bool pkey_block_as_computed(const osm_physp_t* p, int block) {
  static const ib_pkey_table_t empty{};
  const auto b = static_cast<uint16_t>(block);
  const ib_pkey_table_t* held = osm_pkey_tbl_block_get(&p->pkeys, b);
  const ib_pkey_table_t* want = osm_pkey_tbl_new_block_get(&p->pkeys, b);
  return std::memcmp(held ? held : &empty, want ? want : &empty, sizeof empty) == 0;
}

}  // namespace

LftCheck::LftCheck(osm_opensm* osm, int interval_s, Log log, Repair repair, Drops drops)
    : osm_(osm), log_(std::move(log)), repair_(std::move(repair)), drops_(std::move(drops)) {
  service::SwitchCheckLimits limits;
  limits.interval_s = interval_s;
  check_ = std::make_shared<service::SwitchCheck>(limits);
}

LftCheck::~LftCheck() { stop(); }

void LftCheck::sweep_started() {
  ++run_;
  busy_since_ = service::SwitchCheck::Clock::now().time_since_epoch().count();
}

void LftCheck::sweep_done() {
  ++run_;
  busy_since_ = 0;
}

bool LftCheck::sweep_under_way(service::SwitchCheck::Clock::time_point now) const {
  const auto since = service::SwitchCheck::Clock::duration(busy_since_.load());
  return since.count() != 0 && now.time_since_epoch() - since < kSweepHold;
}

void LftCheck::start() {
  // Started with the periodic check off too: audit --from-switches asks for a pass.
  ticker_.start(kTick, [this] {
    try {
      tick();
    } catch (const std::exception& e) {
      log_(true, std::string("switch check: ") + e.what());
    }
  });
}

void LftCheck::stop() { ticker_.stop(); }

// Logs and repairs what the answers found, then sends the next reads: only while this SM is
// master past its first sweep (OpenSM reports no LFT change before), and only when OpenSM has
// no SMP of its own outstanding -- a sweep's MADs never wait behind more than one batch, and
// a fabric slow to answer slows the check down.
void LftCheck::tick() {
  const auto now = service::SwitchCheck::Clock::now();
  for (const auto& line : check_->take_log_lines(now)) log_(true, line);
  if (now - last_repair_ >= kRepairGap) {
    const auto repair = check_->take_repairs();
    if (repair.ports) {
      last_repair_ = now;
      log_(false,
           "switch check: port tables differ from what this SM set; requesting a heavy "
           "sweep");
      repair_(true);
    } else if (repair.lft) {
      last_repair_ = now;
      log_(false, "switch check: LFT blocks differ from what this SM sent; requesting a re-route");
      repair_(false);
    }
  }
  osm_opensm_t* osm = osm_;
  if (osm->subn.sm_state != IB_SMINFO_STATE_MASTER || osm->subn.first_time_master_sweep ||
      osm->stats.qp0_mads_outstanding > 0)
    return;
  cl_plock_acquire(&osm->lock);
  if (osm->subn.sm_state == IB_SMINFO_STATE_MASTER && !osm->subn.first_time_master_sweep) {
    if (!sweep_under_way(now)) compare_port_reads_locked(now);
    if (check_->pass_due(now)) start_pass_locked();
    send_reads_locked(now);
  }
  cl_plock_release(&osm->lock);
}

void LftCheck::start_pass_locked() {
  std::vector<service::CheckedSwitch> switches;
  cl_qmap_t* tbl = &osm_->subn.sw_guid_tbl;
  for (cl_map_item_t* it = cl_qmap_head(tbl); it != cl_qmap_end(tbl); it = cl_qmap_next(it)) {
    auto* sw = reinterpret_cast<osm_switch_t*>(it);
    std::vector<PortTable> ports{{TableKind::kPortInfo, 0, 0}};
    for (auto& t : sl2vl_reads(sw, drops_)) ports.push_back(t);
    switches.emplace_back(cl_ntoh64(osm_node_get_node_guid(sw->p_node)), name_of(sw->p_node),
                          blocks_of(sw), std::move(ports));
  }
  cl_qmap_t* nodes = &osm_->subn.node_guid_tbl;
  for (cl_map_item_t* it = cl_qmap_head(nodes); it != cl_qmap_end(nodes); it = cl_qmap_next(it)) {
    auto* node = reinterpret_cast<osm_node_t*>(it);
    if (osm_node_get_type(node) != IB_NODE_TYPE_CA) continue;
    switches.emplace_back(cl_ntoh64(osm_node_get_node_guid(node)), name_of(node), 0,
                          host_reads(node));
  }
  check_->start_pass(std::move(switches), service::SwitchCheck::Clock::now());
}

std::size_t LftCheck::send_reads_locked(service::SwitchCheck::Clock::time_point now) {
  std::size_t sent = 0;
  if (sweep_under_way(now)) return 0;
  for (const auto& read : check_->next_reads(run_, now)) {
    const bool ok = read.kind == TableKind::kLft ? send_lft_read_locked(read)
                                                 : send_port_read_locked(read, now);
    if (!ok) {
      check_->forget(read);
      continue;
    }
    ++sent;
  }
  return sent;
}

bool LftCheck::send_lft_read_locked(const BlockRead& read) {
  osm_switch_t* sw = osm_get_switch_by_guid(&osm_->subn, cl_hton64(read.guid));
  osm_physp_t* physp = sw ? osm_node_get_physp_ptr(sw->p_node, 0) : nullptr;
  if (!sw || !physp || read.block >= blocks_of(sw)) return false;
  osm_madw_context_t context;
  std::memset(&context, 0, sizeof context);
  context.lft_context.node_guid = osm_node_get_node_guid(sw->p_node);
  context.lft_context.set_method = FALSE;
  // The key OpenSM's own Sets of this table use (set_lft_block): the switch's, as OpenSM
  // set or learned it.
  return osm_req_get(&osm_->sm, osm_physp_get_dr_path_ptr(physp), IB_MAD_ATTR_LIN_FWD_TBL,
                     cl_hton32(static_cast<uint32_t>(read.block)), FALSE,
                     ib_port_info_get_m_key(&physp->port_info), 0, CL_DISP_MSGID_NONE,
                     &context) == IB_SUCCESS;
}

// PortInfo and P_Key reads go to the port itself (a switch's: port 0, through which SMPs reach
// every switch table); SL2VL reads of a switch pair go to its port 0 with (in, out) in the
// attribute modifier. Every context says set_method: see lft_check.h.
bool LftCheck::send_port_read_locked(const BlockRead& read,
                                     service::SwitchCheck::Clock::time_point now) {
  osm_node_t* node = osm_get_node_by_guid(&osm_->subn, cl_hton64(read.guid));
  if (!node) return false;
  const bool sl2vl = read.kind == TableKind::kSl2Vl;
  osm_physp_t* target = osm_node_get_physp_ptr(node, static_cast<uint8_t>(sl2vl ? 0 : read.port));
  osm_physp_t* port = osm_node_get_physp_ptr(node, static_cast<uint8_t>(read.port));
  if (!port_up(target) || !port_up(port)) return false;
  osm_madw_context_t context;
  std::memset(&context, 0, sizeof context);
  const ib_net64_t node_guid = osm_node_get_node_guid(node);
  const ib_net64_t port_guid = osm_physp_get_port_guid(target);
  uint16_t attr = 0;
  uint32_t mod = 0;
  switch (read.kind) {
    case TableKind::kPortInfo:
      attr = IB_MAD_ATTR_PORT_INFO;
      mod = static_cast<uint32_t>(read.port);
      as_if_set(&context.pi_context, node_guid, port_guid);
      break;
    case TableKind::kSl2Vl:
      attr = IB_MAD_ATTR_SLVL_TABLE;
      mod = static_cast<uint32_t>(read.block) << 8 | static_cast<uint32_t>(read.port);
      as_if_set(&context.slvl_context, node_guid, port_guid);
      break;
    case TableKind::kPKey:
      attr = IB_MAD_ATTR_P_KEY_TABLE;
      mod = static_cast<uint32_t>(read.block);
      if (read.block >= osm_pkey_tbl_get_num_blocks(&port->pkeys)) return false;
      as_if_set(&context.pkey_context, node_guid, port_guid);
      break;
    case TableKind::kLft:
      return false;
  }
  PendingPortRead pending{read, now};
  pending.lid = cl_ntoh16(port->port_info.base_lid);
  pending.lmc = ib_port_info_get_lmc(&port->port_info);
  if (osm_req_get(&osm_->sm, osm_physp_get_dr_path_ptr(target), attr, cl_hton32(mod), FALSE,
                  ib_port_info_get_m_key(&target->port_info), 0, CL_DISP_MSGID_NONE,
                  &context) != IB_SUCCESS)
    return false;
  pending_.push_back(pending);
  return true;
}

void LftCheck::compare_port_reads_locked(service::SwitchCheck::Clock::time_point now) {
  auto due = std::stable_partition(pending_.begin(), pending_.end(),
                                   [&](const auto& p) { return now - p.sent < kCompareAfter; });
  for (auto it = due; it != pending_.end(); ++it)
    check_->answer(it->read, run_, port_read_matches_locked(*it), now);
  pending_.erase(due, pending_.end());
}

bool LftCheck::port_read_matches_locked(const PendingPortRead& pending) const {
  const BlockRead& read = pending.read;
  osm_node_t* node = osm_get_node_by_guid(&osm_->subn, cl_hton64(read.guid));
  osm_physp_t* port =
      node ? osm_node_get_physp_ptr(node, static_cast<uint8_t>(read.port)) : nullptr;
  if (!port || !osm_physp_is_valid(port)) return true;  // gone: nothing this SM set to compare
  switch (read.kind) {
    case TableKind::kPortInfo:
      return cl_ntoh16(port->port_info.base_lid) == pending.lid &&
             ib_port_info_get_lmc(&port->port_info) == pending.lmc &&
             port->port_info.master_sm_base_lid == osm_->subn.sm_base_lid;
    case TableKind::kSl2Vl:
      // The pair was chosen when the pass started; tenants may have changed since.
      if (!drops_ || !drops_(read.guid, read.block, read.port)) return true;
      return all_dropped(osm_physp_get_slvl_tbl(port, static_cast<uint8_t>(read.block)));
    case TableKind::kPKey:
      return pkey_block_as_computed(port, read.block);
    case TableKind::kLft:
      break;
  }
  return true;
}

void LftCheck::on_block(osm_switch* sw, unsigned block) {
  if (!sw || !sw->lft || !sw->new_lft || (!check_->enabled() && !check_->pass_under_way())) return;
  if (static_cast<size_t>(block + 1) * IB_SMP_DATA_SIZE > sw->lft_size) return;
  const std::uint64_t guid = cl_ntoh64(osm_node_get_node_guid(sw->p_node));
  const std::uint8_t* sent = sw->new_lft + block * IB_SMP_DATA_SIZE;
  const bool matches = std::memcmp(sw->lft + block * IB_SMP_DATA_SIZE, sent, IB_SMP_DATA_SIZE) == 0;
  const auto outcome = check_->answer(guid, static_cast<int>(block), run_, matches,
                                      service::SwitchCheck::Clock::now());
  if (outcome != service::ReadOutcome::kMismatch) return;
  auto& keep = found_[{guid, block}];
  std::memcpy(keep.data(), sent, IB_SMP_DATA_SIZE);
}

std::size_t LftCheck::restore_found(osm_switch* sw) {
  if (!sw || !sw->new_lft || found_.empty()) return 0;
  const std::uint64_t guid = cl_ntoh64(osm_node_get_node_guid(sw->p_node));
  std::size_t restored = 0;
  for (auto it = found_.lower_bound({guid, 0}); it != found_.end() && it->first.first == guid;
       ++it) {
    const size_t at = static_cast<size_t>(it->first.second) * IB_SMP_DATA_SIZE;
    if (at + IB_SMP_DATA_SIZE > sw->lft_size) continue;
    std::memcpy(sw->new_lft + at, it->second.data(), IB_SMP_DATA_SIZE);
    ++restored;
  }
  return restored;
}

}  // namespace laas::plugin

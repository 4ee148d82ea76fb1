// clang-format off
#include <opensm/osm_config.h>  // must come first: it fixes the layout of osm_opensm_t
#include <complib/cl_passivelock.h>
#define delete delete_cb
#include <opensm/osm_madw.h>
#include <opensm/osm_node.h>
#include <opensm/osm_opensm.h>
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

// The blocks OpenSM sends a switch (set_lft_block): those holding LIDs up to its highest in
// use, within the table OpenSM keeps for it.
int blocks_of(const osm_switch_t* sw) {
  if (!sw->lft || !sw->new_lft) return 0;
  return static_cast<int>(
      std::min<size_t>(sw->max_lid_ho / IB_SMP_DATA_SIZE + 1, sw->lft_size / IB_SMP_DATA_SIZE));
}

std::string name_of(const osm_switch_t* sw) {
  const osm_node_t* node = sw->p_node;
  if (node->print_desc && *node->print_desc) return node->print_desc;
  const auto* d = reinterpret_cast<const char*>(node->node_desc.description);
  return std::string(d, strnlen(d, IB_NODE_DESCRIPTION_SIZE));
}

}  // namespace

LftCheck::LftCheck(osm_opensm* osm, int interval_s, Log log, std::function<void()> reroute)
    : osm_(osm), log_(std::move(log)), reroute_(std::move(reroute)) {
  service::SwitchCheckLimits limits;
  limits.interval_s = interval_s;
  check_ = std::make_shared<service::SwitchCheck>(limits);
}

LftCheck::~LftCheck() { stop(); }

void LftCheck::start() {
  if (!check_->enabled()) return;
  thread_ = std::thread([this] { run(); });
}

void LftCheck::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void LftCheck::run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, kTick);
    if (stopping_) break;
    lock.unlock();
    try {
      tick();
    } catch (const std::exception& e) {
      log_(true, std::string("switch check: ") + e.what());
    }
    lock.lock();
  }
}

// Logs and repairs what the answers found, then sends the next reads: only while this SM is
// master past its first sweep (OpenSM reports no LFT change before), and only when OpenSM has
// no SMP of its own outstanding -- a sweep's MADs never wait behind more than one batch, and
// a fabric slow to answer slows the check down.
void LftCheck::tick() {
  const auto now = service::SwitchCheck::Clock::now();
  for (const auto& line : check_->take_log_lines(now)) log_(true, line);
  if (now - last_repair_ >= kRepairGap && check_->take_repair()) {
    last_repair_ = now;
    log_(false, "switch check: LFT blocks differ from what this SM sent; requesting a re-route");
    reroute_();
  }
  osm_opensm_t* osm = osm_;
  if (osm->subn.sm_state != IB_SMINFO_STATE_MASTER || osm->subn.first_time_master_sweep ||
      osm->stats.qp0_mads_outstanding > 0)
    return;
  cl_plock_acquire(&osm->lock);
  if (osm->subn.sm_state == IB_SMINFO_STATE_MASTER && !osm->subn.first_time_master_sweep) {
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
    switches.push_back({cl_ntoh64(osm_node_get_node_guid(sw->p_node)), name_of(sw), blocks_of(sw)});
  }
  check_->start_pass(std::move(switches), service::SwitchCheck::Clock::now());
}

std::size_t LftCheck::send_reads_locked(service::SwitchCheck::Clock::time_point now) {
  std::size_t sent = 0;
  for (const auto& read : check_->next_reads(run_, now)) {
    osm_switch_t* sw = osm_get_switch_by_guid(&osm_->subn, cl_hton64(read.guid));
    osm_physp_t* physp = sw ? osm_node_get_physp_ptr(sw->p_node, 0) : nullptr;
    if (!sw || !physp || read.block >= blocks_of(sw)) {
      check_->forget(read);
      continue;
    }
    osm_madw_context_t context;
    std::memset(&context, 0, sizeof context);
    context.lft_context.node_guid = osm_node_get_node_guid(sw->p_node);
    context.lft_context.set_method = FALSE;
    // The key OpenSM's own Sets of this table use (set_lft_block): the switch's, as OpenSM
    // set or learned it.
    const ib_api_status_t status =
        osm_req_get(&osm_->sm, osm_physp_get_dr_path_ptr(physp), IB_MAD_ATTR_LIN_FWD_TBL,
                    cl_hton32(static_cast<uint32_t>(read.block)), FALSE,
                    ib_port_info_get_m_key(&physp->port_info), 0, CL_DISP_MSGID_NONE, &context);
    if (status != IB_SUCCESS) {
      check_->forget(read);
      continue;
    }
    ++sent;
  }
  return sent;
}

void LftCheck::on_block(osm_switch* sw, unsigned block) {
  if (!sw || !sw->lft || !sw->new_lft || !check_->enabled()) return;
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

// The control socket's methods: one request object in, one reply object out, and one table
// saying for every method which handler answers it, whether it changes the state and what an SM
// that is not the master does with it.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "service/request_error.h"
#include "service/request_params.h"
#include "service/switch_check.h"
#include "service/tenant_service.h"

namespace laas::service {

using nlohmann::json;

json TenantService::handle(const json& request, const Caller& caller) {
  json response = {{"v", kProtocolVersion}, {"id", nullptr}};
  try {
    if (!request.is_object()) fail(error::kBadRequest, "a request must be a JSON object");
    if (request.contains("id")) {
      if (!request["id"].is_string() && !request["id"].is_number_integer())
        fail(error::kBadRequest, "field 'id' must be a string or an integer");
      response["id"] = request["id"];
    }
    if (!caller.may_read && !caller.may_write)
      fail(error::kPermission, "uid " + std::to_string(caller.uid) + " may not use this service");
    if (!request.contains("v") || !request["v"].is_number_integer())
      fail(error::kBadRequest, "field 'v' (protocol version) must be an integer");
    if (request["v"].get<long long>() != kProtocolVersion)
      fail(error::kBadRequest, "protocol version " + request["v"].dump() +
                                   " is not supported; this server speaks version 1");
    const std::string method = get_string(request, "method");
    json params = request.value("params", json::object());
    if (!params.is_object()) fail(error::kBadRequest, "field 'params' must be an object");
    response["ok"] = true;
    response["result"] = dispatch(method, params, caller);
  } catch (const RequestError& e) {
    response["ok"] = false;
    response["error"] = {{"code", e.code}, {"message", e.message}};
  } catch (const std::exception& e) {
    response["ok"] = false;
    response["error"] = {{"code", error::kInternal}, {"message", e.what()}};
  }
  return response;
}

namespace {

// A reply of handle() as a ChangeResult.
ChangeResult change_result(const json& reply) {
  ChangeResult r;
  r.ok = reply.value("ok", false);
  if (!r.ok && reply.contains("error")) {
    r.code = reply["error"].value("code", "");
    r.message = reply["error"].value("message", "");
  }
  return r;
}

json change_request(const char* method, json params) {
  params["wait"] = false;
  return {{"v", kProtocolVersion}, {"method", method}, {"params", std::move(params)}};
}

}  // namespace

// Through handle(), so that a change asked in code passes every check a socket request does.
ChangeResult TenantService::add_tenant(const std::string& name, int servers,
                                       const std::vector<std::string>& host_list,
                                       const Caller& caller) {
  json params = {{"name", name}};
  if (host_list.empty())
    params["servers"] = servers;
  else
    params["host_list"] = host_list;
  return change_result(handle(change_request(method::kTenantAdd, std::move(params)), caller));
}

ChangeResult TenantService::remove_tenant(const std::string& name, const Caller& caller) {
  return change_result(handle(change_request(method::kTenantRemove, {{"name", name}}), caller));
}

const std::vector<TenantService::Method>& TenantService::methods() {
  using S = TenantService;
  using P = const json&;
  using C = const Caller&;
  // Changes (writes) are made by the master only; while routing fails closed or the state
  // directory does not answer they are refused; they are counted and timed for the metrics. A
  // dry run is no change. A standby answers the tenants and the status from the shared state,
  // refuses what only the master can do, and answers the rest as it can (no fabric: unavailable).
  static const std::vector<Method> table = {
      {method::kStatus, [](S& s, P, C) { return s.views_.status(); }, false,
       OnStandby::kSharedState},
      {method::kTopology, [](S& s, P p, C) { return s.views_.topology_info(p); }, false,
       OnStandby::kAnswer},
      {method::kTenantAdd, [](S& s, P p, C c) { return s.add(p, c); }, true, OnStandby::kRefuse},
      {method::kTenantRemove, [](S& s, P p, C c) { return s.remove(p, c); }, true,
       OnStandby::kRefuse},
      {method::kTenantList, [](S& s, P, C) { return s.views_.tenant_list(); }, false,
       OnStandby::kSharedState},
      {method::kTenantGet, [](S& s, P p, C) { return s.views_.tenant_get(p); }, false,
       OnStandby::kSharedState},
      {method::kTenantPlan,
       [](S& s, P p, C c) {
         json dry = p;
         dry["dry_run"] = true;
         return s.add(dry, c);
       },
       false, OnStandby::kRefuse},
      {method::kHostList, [](S& s, P p, C) { return s.hosts_.host_list(p); }, false,
       OnStandby::kAnswer},
      {method::kHostGet, [](S& s, P p, C) { return s.hosts_.host_show(p); }, false,
       OnStandby::kAnswer},
      {method::kHostDrain, [](S& s, P p, C c) { return s.hosts_.drain(p, c); }, true,
       OnStandby::kRefuse},
      {method::kHostResume, [](S& s, P p, C c) { return s.hosts_.resume(p, c); }, true,
       OnStandby::kRefuse},
      {method::kHostAccept, [](S& s, P p, C c) { return s.hosts_.accept(p, c); }, true,
       OnStandby::kRefuse},
      {method::kLinkList, [](S& s, P p, C) { return s.drains_.link_list(p); }, false,
       OnStandby::kAnswer},
      {method::kLinkDrain, [](S& s, P p, C c) { return s.drains_.fabric_drain(p, c, true, true); },
       true, OnStandby::kRefuse},
      {method::kLinkResume,
       [](S& s, P p, C c) { return s.drains_.fabric_drain(p, c, true, false); }, true,
       OnStandby::kRefuse},
      {method::kSwitchList, [](S& s, P p, C) { return s.drains_.switch_list(p); }, false,
       OnStandby::kAnswer},
      {method::kSwitchDrain,
       [](S& s, P p, C c) { return s.drains_.fabric_drain(p, c, false, true); }, true,
       OnStandby::kRefuse},
      {method::kSwitchResume,
       [](S& s, P p, C c) { return s.drains_.fabric_drain(p, c, false, false); }, true,
       OnStandby::kRefuse},
      {method::kSmList, [](S& s, P, C) { return s.sm_list(); }, false, OnStandby::kAnswer},
      {method::kSmAccept, [](S& s, P p, C c) { return s.sm_trust_.sm_change(p, c, true); }, true,
       OnStandby::kRefuse},
      {method::kSmForget, [](S& s, P p, C c) { return s.sm_trust_.sm_change(p, c, false); }, true,
       OnStandby::kRefuse},
      {method::kMetrics,
       [](S& s, P, C) {
         std::lock_guard<std::mutex> lock(s.st_.mu);
         return json{{"text", s.metrics_.metrics_text()}};
       },
       false, OnStandby::kAnswer},
      {method::kAudit, [](S& s, P p, C c) { return s.run_audit(p, c); }, false, OnStandby::kAnswer},
      // Not counted as a change: it changes no tenant, and a run while failing closed is how
      // the fabric is looked at again.
      {method::kReroute, [](S& s, P, C c) { return s.reroute_now(c); }, false, OnStandby::kRefuse},
      {method::kExport,
       [](S& s, P p, C) {
         std::lock_guard<std::mutex> lock(s.st_.mu);
         return s.exports_.export_files(p);
       },
       false, OnStandby::kAnswer},
      // A long-poll: waits on the event log's own lock, never the service's (service/events.h).
      {method::kEvents, [](S& s, P p, C) { return answer_events(s.st_.events, p); }, false,
       OnStandby::kAnswer},
  };
  return table;
}

json TenantService::dispatch(const std::string& name, const json& params, const Caller& caller) {
  const auto& table = methods();
  const auto it =
      std::find_if(table.begin(), table.end(), [&](const Method& m) { return name == m.name; });
  if (it == table.end()) {
    std::string names;
    for (const auto& m : table) names += std::string(names.empty() ? "" : ", ") + m.name;
    fail(error::kBadRequest, "unknown method '" + name + "'; methods: " + names);
  }
  if (!it->writes || get_bool(params, "dry_run", false)) return answer(*it, false, params, caller);
  // Changes are counted and timed for the metrics, and the metrics file follows them.
  const auto t0 = std::chrono::steady_clock::now();
  bool ok = false;
  auto done = [&] {
    std::lock_guard<std::mutex> lock(st_.mu);
    // Links and switches are counted apart from hosts: "link_drain", "switch_resume".
    std::string op = name.substr(name.find('.') + 1);
    if (name.rfind("link.", 0) == 0 || name.rfind("switch.", 0) == 0)
      op = name.substr(0, name.find('.')) + "_" + op;
    metrics_.note_change(
        op.c_str(), std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
        ok);
    metrics_.write_metrics_file();
  };
  try {
    json result = answer(*it, true, params, caller);
    ok = true;
    done();
    return result;
  } catch (...) {
    done();
    throw;
  }
}

json TenantService::answer(const Method& m, bool change, const json& params, const Caller& caller) {
  // Only the master changes tenants; the others answer from the shared state.
  const SmRole sm = current_role(st_);
  bool master;
  {
    std::lock_guard<std::mutex> lock(st_.mu);
    master = sm.may_change_tenants() && holds_term(st_);
  }
  if (!master && m.standby == OnStandby::kRefuse) {
    std::string fenced;
    {
      std::lock_guard<std::mutex> lock(st_.mu);
      fenced = st_.term.fenced;
    }
    if (sm.may_change_tenants() && !fenced.empty())
      fail(error::kNotMaster,
           "OpenSM says this SM is master, but another SM has taken the "
           "tenant state over (two masters?): " +
               fenced);
    if (sm.may_change_tenants())
      fail(error::kBusy,
           "this SM is master but has not taken the tenant state over yet (its first routing "
           "run as master is under way): try again in a few seconds");
    fail(error::kNotMaster, sm.refusal());
  }
  if (!master && m.standby == OnStandby::kSharedState) {
    std::lock_guard<std::mutex> lock(st_.mu);
    shared_.reload();  // what the master wrote since
    return views_.recorded_answer(m.name, params, sm);
  }
  if (change) {
    refuse_changes_while_not_answering();
    refuse_changes_while_closed();
  }
  return m.handler(*this, params, caller);
}

// {"read_back": true} (`laasctl audit --from-switches`): the switch check reads every table
// back now, at its highest rate, with the M_Key OpenSM uses; the audit then runs on OpenSM's
// copy, which holds what the switches answered (and what the check sent again), and says what
// that pass found differing. Bounded by "timeout_s" (default 600): a pass at the LID limit
// takes about 20 minutes.
json TenantService::read_back_now(const json& params) {
  if (!st_.hooks.switch_check)
    fail(error::kUnavailable,
         "this process reads no table back from the switches; use laasctl audit "
         "--from-switches --via-diags on a host with a port");
  int timeout_s = 600;
  if (params.contains("timeout_s")) timeout_s = get_int(params, "timeout_s");
  if (timeout_s < 1 || timeout_s > 86400)
    fail(error::kBadRequest,
         "timeout_s " + std::to_string(timeout_s) + " is out of range (1-86400)");
  const auto start = SwitchCheck::Clock::now();
  const long pass = st_.hooks.switch_check->request_pass_now();
  if (!st_.hooks.switch_check->wait_pass_finished(pass, std::chrono::seconds(timeout_s)))
    fail(error::kUnavailable, "the read-back pass did not finish in " + std::to_string(timeout_s) +
                                  " s (is this SM master? laasctl status); it goes on, and its "
                                  "findings count in laasctl audit");
  const auto report = st_.hooks.switch_check->report(SwitchCheck::Clock::now());
  return {
      {"pass", pass},
      {"seconds",
       std::round(std::chrono::duration<double>(SwitchCheck::Clock::now() - start).count() * 10) /
           10},
      {"tables", report["pass"].value("blocks", 0L)},
      {"mismatches", report["pass"].value("mismatches", 0L)},
      {"switches", report["switches"]}};
}

json TenantService::run_audit(const json& params, const Caller& caller) {
  if (!st_.hooks.audit) fail(error::kUnavailable, "no audit is available in this process");
  // Without mu: the hook takes OpenSM's lock, which the routing side holds while it calls in.
  const auto run = audits_.start(caller.uid);
  if (!run) fail(error::kBusy, "too many audits (" + run.why + "); try again when one is done");
  json read_back;
  if (get_bool(params, "read_back", false)) read_back = read_back_now(params);
  json report = st_.hooks.audit();
  if (!read_back.is_null()) {
    report["source"] = "switches";
    report["read_back"] = read_back;
  }
  std::lock_guard<std::mutex> lock(st_.mu);
  if (report.contains("violations") && report["violations"].is_number_integer())
    metrics_.note_audit(report["violations"].get<int>());
  metrics_.write_metrics_file();
  return report;
}

}  // namespace laas::service

// laasctl events: the tenant state's changes (service/events.h), once or followed.
#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "laasctl/client.h"
#include "laasctl/commands.h"
#include "service/events.h"

namespace laas::ctl {

using nlohmann::json;

namespace {

struct EventsArgs {
  std::optional<std::uint64_t> since;
  bool follow = false;
};

// One line an event: its number, time, type and what it names.
void print_event(const json& e, bool as_json) {
  if (as_json) {
    std::cout << e.dump() << std::endl;  // one object a line: `jq` and scripts read it as it comes
    return;
  }
  std::cout << e.value("seq", 0ULL) << "  " << e.value("time", "") << "  " << e.value("type", "");
  for (const char* field : {"tenant", "host", "link", "switch"})
    if (e.contains(field)) std::cout << "  " << field << "=" << e[field].get<std::string>();
  if (e.contains("hosts")) std::cout << "  hosts=" << e["hosts"].size();
  if (e.contains("pkey") && !e.value("pkey", "").empty())
    std::cout << "  pkey=" << e["pkey"].get<std::string>();
  if (e.contains("reason")) std::cout << "  reason=\"" << e["reason"].get<std::string>() << "\"";
  std::cout << std::endl;
}

void warn_lost(std::optional<std::uint64_t> since) {
  std::cerr << "laasctl: events after " << (since ? std::to_string(*since) : std::string("?"))
            << " are lost (dropped from the service's ring, or the service restarted or failed "
               "over since): re-read the state (laasctl tenant list, host list)\n";
}

// Without --follow: the events the service still holds after --since (all of them without it).
int events_once(const Context& c, const EventsArgs& a) {
  json result;
  const int rc = c.request(service::method::kEvents, {{"since", a.since.value_or(0)}}, result);
  if (rc != kExitOk) return rc;
  if (c.json_output()) return Context::print_json(result);
  for (const auto& e : result["events"]) print_event(e, false);
  if (a.since && result.value("lost", false)) warn_lost(a.since);
  std::cout << "next: " << result.value("next", 0ULL) << "\n";
  return kExitOk;
}

// --follow: long-polls for ever, through restarts and failovers of the service (it waits for the
// socket to answer again, and says once when it does not).
int events_follow(const Context& c, const EventsArgs& a) {
  std::optional<std::uint64_t> since = a.since;
  const int timeout_ms = c.options().timeout_s * 1000;
  const int wait = std::max(0, std::min(service::kMaxEventWaitMs, timeout_ms - 2000));
  bool said_down = false;
  for (;;) {
    json params = {{"wait_ms", wait}};
    if (since) params["since"] = *since;
    json reply;
    try {
      reply = call(c.options().socket, service::method::kEvents, params, timeout_ms);
    } catch (const ClientError& e) {
      if (e.exit_code() != kExitUnreachable && e.exit_code() != kExitTimeout) throw;
      if (!said_down) std::cerr << "laasctl: " << e.what() << "; retrying every second\n";
      said_down = true;
      std::this_thread::sleep_for(std::chrono::seconds(1));
      continue;
    }
    const json err = reply.value("error", json::object());
    if (!reply.value("ok", false)) {
      const std::string code = err.value("code", "internal");
      if (exit_code_for(code) != kExitBusy) {
        std::cerr << "laasctl: " << err.value("message", "request failed") << " (" << code << ")\n";
        return exit_code_for(code);
      }
      std::this_thread::sleep_for(std::chrono::seconds(1));
      continue;
    }
    if (said_down) std::cerr << "laasctl: the service answers again\n";
    said_down = false;
    const json& result = reply["result"];
    if (result.value("lost", false)) warn_lost(since);
    for (const auto& e : result["events"]) print_event(e, c.json_output());
    since = result.value("next", 0ULL);
  }
}

int run_events(const Context& c, const EventsArgs& a) {
  return a.follow ? events_follow(c, a) : events_once(c, a);
}

}  // namespace

void add_events_command(CLI::App& app, CommandTable& table) {
  auto args = std::make_shared<EventsArgs>();
  auto* cmd = app.add_subcommand(
      "events",
      "tenant, host, link and switch changes, numbered (--follow: as they happen, through "
      "service restarts)");
  cmd->add_option("--since", args->since,
                  "only the events after this number (a 'next' printed before); without it, "
                  "every event the service holds, or with --follow only new ones");
  cmd->add_flag("-f,--follow", args->follow,
                "wait for events and print each as it comes (with --json one object a line)");
  table.add(cmd, args, run_events);
}

}  // namespace laas::ctl

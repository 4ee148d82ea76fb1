// GET /v1/events: the control socket's `events` answers (service/events.h) as Server-Sent
// Events. Pure: api/server.cc long-polls the socket and writes what these return.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace laas::api {

// How long one long-poll of the socket waits for an event before the stream gets a comment
// (which is also how a client that went away is noticed).
constexpr int kEventsWaitMs = 10000;

// The SSE text for one `events` result ({"events", "next", "lost"}): an event per change, its
// id the seq (a client resumes with Last-Event-ID), its event name the type, its data the
// change as JSON on one line; "lost" first when the position was lost (the client re-reads the
// state); a comment when there is nothing, so that the connection is written to.
std::string sse_frames(const nlohmann::json& result);

// The position after a result ("next"), or nullopt when the result has none.
std::optional<std::uint64_t> next_position(const nlohmann::json& result);

}  // namespace laas::api

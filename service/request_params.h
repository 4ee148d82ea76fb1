// Typed access to a request's parameters, with errors that name the field (RequestError,
// bad_request): shared by the request handlers of TenantService's units.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "service/protocol.h"
#include "service/request_error.h"

namespace laas::service {

// Now, in UTC (ISO 8601): when a drain was made.
std::string utc_now();

inline std::string get_string(const nlohmann::json& params, const char* field) {
  if (!params.contains(field))
    fail(error::kBadRequest, std::string("missing field '") + field + "'");
  if (!params[field].is_string())
    fail(error::kBadRequest, std::string("field '") + field + "' must be a string");
  return params[field].get<std::string>();
}

inline int get_int(const nlohmann::json& params, const char* field) {
  if (!params.contains(field))
    fail(error::kBadRequest, std::string("missing field '") + field + "'");
  if (!params[field].is_number_integer())
    fail(error::kBadRequest, std::string("field '") + field + "' must be an integer");
  const auto v = params[field].get<long long>();
  if (v < -1000000000LL || v > 1000000000LL)
    fail(error::kBadRequest, std::string("field '") + field + "' is out of range");
  return static_cast<int>(v);
}

inline bool get_bool(const nlohmann::json& params, const char* field, bool fallback) {
  if (!params.contains(field)) return fallback;
  if (!params[field].is_boolean())
    fail(error::kBadRequest, std::string("field '") + field + "' must be true or false");
  return params[field].get<bool>();
}

}  // namespace laas::service

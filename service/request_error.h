// A request refused with a protocol error code (protocol.h, namespace error) and a
// message: thrown by the request handlers, turned into the reply by TenantService::handle.
#pragma once

#include <string>

namespace laas::service {

struct RequestError {
  std::string code;
  std::string message;
};

[[noreturn]] inline void fail(const char* code, const std::string& message) {
  throw RequestError{code, message};
}

}  // namespace laas::service

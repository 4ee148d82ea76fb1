// One request, one reply over the control socket.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace laas::ctl {

// sysexits-style codes laasctl returns.
constexpr int kExitOk = 0;
constexpr int kExitRefused = 1;
constexpr int kExitUsage = 2;
constexpr int kExitUnreachable = 69;  // EX_UNAVAILABLE
constexpr int kExitPermission = 77;   // EX_NOPERM

class ClientError : public std::runtime_error {
 public:
  ClientError(int exit_code, const std::string& message)
      : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

// Sends {"v":1,"id":..,"method":..,"params":..} and returns the reply object.
// Throws ClientError (unreachable / permission) when the socket cannot be used.
nlohmann::json call(const std::string& socket_path, const std::string& method,
                    const nlohmann::json& params, int timeout_ms);

// Sends `lines` verbatim (a debugging aid: malformed requests included) and returns every
// reply line received until the service closes the connection or stays silent for timeout_ms.
std::string call_raw(const std::string& socket_path, const std::string& lines, int timeout_ms);

// The exit code for an error reply's code.
int exit_code_for(const std::string& error_code);

}  // namespace laas::ctl

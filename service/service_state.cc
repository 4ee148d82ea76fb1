#include "service/service_state.h"

namespace laas::service {

ServiceState::ServiceState(ServiceConfig config_in, Logger log_in)
    : config(std::move(config_in)),
      log(std::move(log_in)),
      store(config.state_dir),
      health(config.link_error_threshold, config.link_error_clean_readings,
             config.link_error_consecutive_readings) {}

}  // namespace laas::service

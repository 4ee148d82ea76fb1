// The control socket's request handling, line by line, against a live TenantService on a model
// fabric (state written to a scratch directory, fsync stubbed out for speed): every reply must
// be one JSON object line, whatever the input.
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "service/socket_server.h"
#include "service/tenant_service.h"
#include "tests/fuzz/fuzz_util.h"
#include "topology/embedding.h"

using namespace laas;

namespace {

service::TenantService& shared_service() {
  static service::TenantService* s = [] {
    service::set_fsync_for_tests([](int, bool) { return 0; });
    service::ServiceConfig c;
    c.state_dir = fuzz::scratch_dir() + "/state";
    c.default_wait_ms = 0;
    auto* svc = new service::TenantService(c, [](service::LogLevel, const std::string&) {});
    const auto tree = topology::FatTree::parse("xgft(2;4,8;1,4)");
    auto [fabric, emb] = topology::build_model_fabric(tree);
    svc->on_topology(std::make_shared<service::TopologyView>(tree, fabric, emb));
    svc->interrupt_waits();  // a request asking to wait for routing must not stall the fuzzer
    return svc;
  }();
  return *s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  if (size == 0) return 0;
  auto& service = shared_service();
  // The first byte picks the caller: a reader, a writer, root.
  const service::Caller caller{data[0] % 3 == 0 ? 0L : 1000L, data[0] % 3 != 1};
  const std::string input(reinterpret_cast<const char*>(data + 1), size - 1);
  size_t start = 0;
  while (start <= input.size()) {
    size_t end = input.find('\n', start);
    if (end == std::string::npos) end = input.size();
    const std::string reply =
        service::answer_line(input.substr(start, end - start), service, caller);
    if (reply.empty() || reply.back() != '\n') std::abort();
    const auto parsed = nlohmann::json::parse(reply);  // throws (a crash) if not JSON
    if (!parsed.is_object() || !parsed.contains("ok")) std::abort();
    start = end + 1;
  }
  // Keep the fabric from filling up for good: drop every tenant now and then.
  if (service.tenant_names().size() > 6)
    for (const auto& name : service.tenant_names())
      service.handle({{"v", 1}, {"method", "tenant.remove"}, {"params", {{"name", name}}}},
                     {0, true});
  return 0;
}

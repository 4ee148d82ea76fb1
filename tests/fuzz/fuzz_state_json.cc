// state.json: a trusted state or std::runtime_error; a loaded state saves and reloads equal.
#include <cstdint>
#include <cstdlib>
#include <stdexcept>

#include "service/state_store.h"
#include "tests/fuzz/fuzz_util.h"

using namespace laas::service;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  static const bool init = [] {
    set_fsync_for_tests([](int, bool) { return 0; });
    return true;
  }();
  (void)init;
  laas::fuzz::write_input("state.json", data, size);
  StateStore store(laas::fuzz::scratch_dir());
  PersistedState state;
  try {
    state = store.load();
  } catch (const std::runtime_error&) {
    return 0;
  }
  // What was accepted must survive a save and a load unchanged.
  store.save(state);
  const PersistedState again = store.load();
  if (again.tenants.size() != state.tenants.size() || again.generation != state.generation ||
      again.topology != state.topology)
    std::abort();
  for (size_t i = 0; i < state.tenants.size(); ++i)
    if (again.tenants[i].name != state.tenants[i].name ||
        again.tenants[i].hosts != state.tenants[i].hosts ||
        again.tenants[i].pkey != state.tenants[i].pkey)
      std::abort();
  return 0;
}

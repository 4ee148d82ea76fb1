#include "core/sent_tables.h"

#include <chrono>
#include <utility>

namespace laas::core {

SentTables::SentTables(const Config& config, service::TenantService& service, service::Logger log)
    : config_(config),
      service_(service),
      log_(log),
      file_(service_.io(), config_.sent_tables_file(), config_.state_dir, std::move(log),
            service_.tables_file_health()) {}

// Before the SM has sent anything since its start, "keep what the switches hold" has nothing
// to keep but the tables this SM last sent, kept in the state directory.
bool SentTables::give_back(RouteOutcome& out) const {
  if (out.saved_tables) return true;
  if (config_.state_dir_unknown) return false;  // the tables of a guessed directory: none
  std::string why;
  out.saved_tables = load(&why);
  if (out.saved_tables) {
    const auto& stamp = out.saved_tables->stamp;
    const long long age = std::chrono::duration_cast<std::chrono::seconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count() -
                          stamp.written_at;
    out.info.push_back(
        "OpenSM has sent no table since its start: the switches get the tables "
        "this SM last sent (" +
        std::to_string(out.saved_tables->switches.size()) + " switches in " + file_.path() +
        ", written in term " + std::to_string(stamp.term) + " " + std::to_string(age) +
        " s ago), where each LID still belongs to the port it belonged to then");
  } else {
    out.warnings.push_back(
        "OpenSM has sent no table since its start and the tables last sent "
        "cannot be read (" +
        why + ")");
  }
  return out.saved_tables != nullptr;
}

// The file, unless a master held a newer term than the one it was written in: the state's
// term is this SM's own once it took the state over (the last master's is the one before), or
// the term last read otherwise.
std::shared_ptr<const routing::SavedTables> SentTables::load(std::string* why) const {
  if (config_.state_dir_unknown) {
    if (why) *why = "laas.yaml could not be read: the state directory is not known";
    return nullptr;
  }
  auto saved = file_.load(why);
  if (!saved) return saved;
  bool held = false;
  const std::uint64_t term = service_.state_term(&held);
  const std::uint64_t last_term = held && term > 0 ? term - 1 : term;
  const std::string refusal = routing::older_term_refusal(saved->stamp, last_term);
  if (refusal.empty()) return saved;
  *why = file_.path() + ": " + refusal;
  return nullptr;
}

// Only while this SM is master and holds the shared state's term: a deposed master's run
// (its SM still thinks it is master, another SM took the state over) writes nothing; the
// worker checks the term again under state.lock before the file is replaced.
void SentTables::keep(routing::LidOwners lids, std::vector<Guid> switch_guids,
                      std::vector<std::vector<std::uint8_t>> tables,
                      std::shared_ptr<const routing::Sl2VlTables> sl2vl) {
  if (!config_.problems.empty()) return;
  std::uint64_t term = 0;
  if (!may_keep(&term)) return;
  file_.save(term, std::move(lids), std::move(switch_guids), std::move(tables), std::move(sl2vl));
}

void SentTables::keep_given_back(std::shared_ptr<const routing::SavedTables> given) {
  std::uint64_t term = 0;
  if (!config_.problems.empty() || !given || !may_keep(&term)) return;
  file_.save_given_back(term, std::move(given));
}

bool SentTables::may_keep(std::uint64_t* term) {
  bool held = false;
  *term = service_.state_term(&held);
  const service::SmRole sm = service_.role();
  if (sm.may_change_tenants() && held) {
    not_kept_.clear();
    return true;
  }
  const std::string why = !sm.may_change_tenants()
                              ? "this SM is " + sm.name() + ", not master"
                              : "this SM does not hold the shared state's term (it has not "
                                "taken the state over), so the write could not be fenced";
  if (why != not_kept_)
    log_(service::LogLevel::kError,
         "laas: the tables sent are not kept in " + file_.path() + ": " + why);
  not_kept_ = why;
  return false;
}

}  // namespace laas::core

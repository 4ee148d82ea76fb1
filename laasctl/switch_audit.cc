#include "laasctl/switch_audit.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

#include "core/store_config.h"
#include "laasctl/client.h"
#include "service/state_io.h"

namespace laas::ctl {

namespace {

// Runs argv with stdout into `out` and stderr into `err` (files); the program is looked up in
// PATH, then in /usr/sbin (infiniband-diags live there). Returns its exit status, 127 when it
// could not be started, 128+N when killed by signal N.
int run(const std::vector<std::string>& argv, const std::string& out, const std::string& err) {
  const pid_t pid = fork();
  if (pid < 0) return 127;
  if (pid == 0) {
    const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    const int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (o < 0 || e < 0 || in < 0 || dup2(in, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0) _exit(127);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    if (argv[0].find('/') == std::string::npos) {
      const std::string sbin = "/usr/sbin/" + argv[0];
      execv(sbin.c_str(), args.data());
    }
    dprintf(2, "cannot run %s: %s\n", argv[0].c_str(), std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return 127;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string first_lines(const std::string& path, int n) {
  std::istringstream in(slurp(path));
  std::string line, out;
  for (int i = 0; i < n && std::getline(in, line); ++i) out += (out.empty() ? "" : " | ") + line;
  return out;
}

// laas-audit: $LAAS_AUDIT, beside this laasctl (the package installs both in one directory),
// else from PATH.
std::string audit_program() {
  if (const char* env = std::getenv("LAAS_AUDIT"); env && *env) return env;
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    std::string dir(self, static_cast<size_t>(n));
    dir = dir.substr(0, dir.rfind('/'));
    const std::string beside = dir + "/laas-audit";
    if (access(beside.c_str(), X_OK) == 0) return beside;
  }
  return "laas-audit";
}

bool exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

// What the plugin recorded and the audit checks against: allocations.json (required) and
// layout.json (when recorded). Files of the state directory, or keys in etcd, which this host
// reads into the dump directory.
struct Recorded {
  std::string allocations, layout;                      // paths ("" layout: none recorded)
  std::string from_etcd_allocations, from_etcd_layout;  // the keys' text, when from etcd
  bool in_etcd = false;
};

bool write_private(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  return static_cast<bool>(out.flush());
}

// The SM keeps its state in etcd (its status names "etcd:PREFIXstate"): the parts are read from
// the etcd that laas.yaml (`config`) names, with the project's client (the SM's own deadline,
// timeout_ms). Returns laasctl's exit code (0: read).
int read_from_etcd(const std::string& state_key, const std::string& config, Recorded& r) {
  const auto checked = core::check_config(config);
  if (!checked.problems.empty()) {
    for (const auto& problem : checked.problems) std::cerr << problem << "\n";
    std::cerr << "laasctl: the SM keeps its state in " << state_key << ", and " << config
              << " (--config) cannot be used to reach it: fix it first (laasctl config check)\n";
    return kExitUsage;
  }
  const std::string expected = "etcd:" + checked.etcd.prefix + "state";
  if (checked.state_store != "etcd" || expected != state_key) {
    std::cerr << "laasctl: the SM keeps its state in " << state_key << ", but " << config
              << " says " << (checked.state_store == "etcd" ? expected : "state_store: dir")
              << ": give the SM's laas.yaml with --config\n";
    return kExitUsage;
  }
  const service::StateStore store = core::offline_state_store(checked);
  std::string endpoints;
  for (const auto& e : checked.etcd.endpoints) endpoints += (endpoints.empty() ? "" : ", ") + e;
  try {
    const service::SharedParts parts = store.read_parts();
    r.in_etcd = true;
    r.allocations = store.part_path("allocations");
    if (const auto a = parts.find("allocations"); a != parts.end())
      r.from_etcd_allocations = a->second;
    if (const auto l = parts.find("layout"); l != parts.end()) r.from_etcd_layout = l->second;
  } catch (const std::exception& e) {
    std::cerr << "laasctl: cannot read " << store.part_path("allocations") << " and "
              << store.part_path("layout") << " from etcd (endpoints " << endpoints << ", "
              << config << "): " << e.what() << "\n";
    return kExitUnreachable;
  }
  if (r.from_etcd_allocations.empty()) {
    std::cerr << "laasctl: etcd (endpoints " << endpoints << ") holds no " << r.allocations
              << " (no routing run recorded yet): the tables read back cannot be audited\n";
    return kExitInternal;
  }
  return kExitOk;
}

// Where the recorded parts are, from the SM's status: its state directory, or etcd.
int find_recorded(const StatusRequester& status, const SwitchAuditOptions& o, Recorded& r) {
  nlohmann::json st;
  if (const int rc = status(st)) return rc;
  const std::string state_file = st.value("state_file", "");
  if (state_file.rfind("etcd:", 0) == 0) return read_from_etcd(state_file, o.config, r);
  const std::string state_dir = state_file.substr(0, state_file.rfind('/'));
  r.allocations = state_dir + "/allocations.json";
  if (state_file.empty() || !exists(r.allocations)) {
    std::cerr << "laasctl: " << r.allocations
              << " cannot be read (no routing run recorded yet, or no access to the state "
                 "directory): the tables read back cannot be audited\n";
    return kExitInternal;
  }
  if (exists(state_dir + "/layout.json")) r.layout = state_dir + "/layout.json";
  return kExitOk;
}

// The parts read from etcd, as files in the dump directory for laas-audit.
int write_recorded(const std::string& dir, Recorded& r) {
  if (!r.in_etcd) return kExitOk;
  const std::string from = r.allocations;
  r.allocations = dir + "/allocations.json";
  if (!write_private(r.allocations, r.from_etcd_allocations)) {
    std::cerr << "laasctl: cannot write " << r.allocations << " (" << from << ")\n";
    return kExitInternal;
  }
  if (r.from_etcd_layout.empty()) return kExitOk;
  r.layout = dir + "/layout.json";
  if (!write_private(r.layout, r.from_etcd_layout)) {
    std::cerr << "laasctl: cannot write " << r.layout << "\n";
    return kExitInternal;
  }
  return kExitOk;
}

}  // namespace

int audit_from_switches(const StatusRequester& status, const SwitchAuditOptions& o) {
  // What the plugin recorded, read first: a store that does not answer fails before the fabric
  // is read.
  Recorded recorded;
  if (const int rc = find_recorded(status, o, recorded)) return rc;
  char tmpl[] = "/tmp/laasctl-audit.XXXXXX";
  if (!mkdtemp(tmpl)) {
    std::cerr << "laasctl: cannot create a directory for the dumps: " << std::strerror(errno)
              << "\n";
    return kExitInternal;
  }
  const std::string dir = tmpl;
  if (const int rc = write_recorded(dir, recorded)) return rc;
  std::vector<std::string> where;
  if (!o.ca.empty()) where.insert(where.end(), {"-C", o.ca});
  if (o.ca_port > 0) where.insert(where.end(), {"-P", std::to_string(o.ca_port)});
  // ibnetdiscover's and dump_fts's --m_key (infiniband-diags' common -y).
  if (!o.m_key.empty()) where.insert(where.end(), {"-y", o.m_key});
  auto read_back = [&](const std::string& tool, const std::string& file) {
    std::vector<std::string> argv{tool};
    argv.insert(argv.end(), where.begin(), where.end());
    const int rc = run(argv, dir + "/" + file, dir + "/" + file + ".err");
    if (rc != 0)
      std::cerr << "laasctl: " << tool << " failed (exit " << rc
                << "): " << first_lines(dir + "/" + file + ".err", 3) << " (dumps kept in " << dir
                << ")\n";
    return rc == 0;
  };
  // The fabric first, then the tables: a table read later than the fabric can only be newer.
  if (!read_back("ibnetdiscover", "fabric") || !read_back("dump_fts", "lfts"))
    return kExitUnreachable;
  std::vector<std::string> argv{audit_program(), "--fabric",      dir + "/fabric",      "--lfts",
                                dir + "/lfts",   "--allocations", recorded.allocations, "--json"};
  if (!recorded.layout.empty()) argv.insert(argv.end(), {"--layout", recorded.layout});
  const int rc = run(argv, dir + "/audit.json", dir + "/audit.err");
  nlohmann::json report;
  try {
    report = nlohmann::json::parse(slurp(dir + "/audit.json"));
  } catch (const nlohmann::json::exception&) {
    std::cerr << "laasctl: " << argv[0] << " failed (exit " << rc
              << "): " << first_lines(dir + "/audit.err", 3) << " (dumps kept in " << dir << ")\n";
    return kExitInternal;
  }
  report["source"] = "switches";
  if (!report.contains("violations")) report["violations"] = rc == 1 ? 1 : 0;
  const bool clean = rc == 0;
  if (!clean || o.keep)
    report["dumps"] = dir;  // the evidence: fabric and tables as read back
  else
    for (const char* f : {"fabric", "fabric.err", "lfts", "lfts.err", "audit.json", "audit.err",
                          "allocations.json", "layout.json"})
      unlink((dir + "/" + f).c_str());
  if (clean && !o.keep) rmdir(dir.c_str());
  std::cout << report.dump(2) << "\n";
  if (rc == 0) return kExitOk;
  if (rc == 1) return kExitRefused;
  std::cerr << "laasctl: " << argv[0] << " exit " << rc << ": "
            << first_lines(dir + "/audit.err", 3) << "\n";
  return kExitInternal;
}

}  // namespace laas::ctl

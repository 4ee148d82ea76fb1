// The resume check as a hardened call: `CHECK -- GUID NAME` with a name the host's root cannot
// turn into an option, spawned with stdin, stdout and stderr only, PATH and LANG only, in its
// own process group killed whole at the timeout; a program others may change is refused.
#include "service/resume_check.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "temp_files.h"

using namespace laas::service;
using laas::test::slurp;
using laas::test::TempDir;

namespace {

std::string script(const std::string& dir, const std::string& body, mode_t mode = 0755) {
  const std::string path = dir + "/check.sh";
  {
    std::ofstream f(path);
    f << "#!/bin/sh\n" << body;
  }
  chmod(path.c_str(), mode);
  return path;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Gone, or a zombie nobody reaped yet: in either case it runs no more.
bool dead(const std::string& pid) {
  const std::string stat = slurp("/proc/" + pid + "/stat");
  const auto paren = stat.rfind(')');
  return stat.empty() || (paren != std::string::npos && stat.compare(paren + 2, 1, "Z") == 0);
}

bool dies_soon(const std::string& pid) {
  for (int i = 0; i < 100 && !dead(pid); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  return dead(pid);
}

}  // namespace

TEST(ResumeCheck, ArgvEnvironmentDescriptorsAndProcessGroup) {
  TempDir dir;
  const std::string rec = dir.path + "/record";
  const std::string check =
      script(dir.path, "for a in \"$@\"; do printf '%s\\n' \"$a\"; done >" + rec +
                           ".argv\n"
                           "tr '\\0' '\\n' </proc/$$/environ >" +
                           rec +
                           ".env\n"
                           "cat /proc/$$/stat >" +
                           rec +
                           ".stat\n"
                           "echo checked\n"
                           "exec ls -l /proc/self/fd >" +
                           rec + ".fds\n");
  // Descriptors the service's process holds without O_CLOEXEC, and an environment of its own.
  int leaked[2];
  ASSERT_EQ(pipe(leaked), 0);
  setenv("LAAS_TEST_SECRET", "x", 1);
  const auto run = run_check(check, "0x0000000000000042", "comp-1", 10000);
  unsetenv("LAAS_TEST_SECRET");
  close(leaked[0]);
  close(leaked[1]);
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_EQ(run.output, "checked\n");
  EXPECT_EQ(lines(slurp(rec + ".argv")),
            (std::vector<std::string>{"--", "0x0000000000000042", "comp-1"}));
  const auto env = lines(slurp(rec + ".env"));
  EXPECT_EQ(std::set<std::string>(env.begin(), env.end()),
            (std::set<std::string>{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C"}));
  // Only 0 (/dev/null), 1 and 2 -- and the directory ls itself reads.
  const auto fds = lines(slurp(rec + ".fds"));
  ASSERT_FALSE(fds.empty());
  int seen = 0;
  for (const auto& line : fds) {
    const auto arrow = line.find(" -> ");
    if (arrow == std::string::npos) continue;
    const auto space = line.rfind(' ', arrow - 1);
    const int fd = std::stoi(line.substr(space + 1, arrow - space - 1));
    const std::string target = line.substr(arrow + 4);
    ++seen;
    if (fd == 0) {
      EXPECT_EQ(target, "/dev/null");
    }
    if (fd > 2) {
      EXPECT_TRUE(target.rfind("/proc/", 0) == 0 && target.size() > 3 &&
                  target.compare(target.size() - 3, 3, "/fd") == 0)
          << "descriptor " << fd << " -> " << target << " was inherited";
    }
  }
  EXPECT_GE(seen, 3) << slurp(rec + ".fds");
  // Its own process group: field 5 of /proc/PID/stat is the group, field 1 the pid.
  const std::string stat = slurp(rec + ".stat");
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string state, ppid, pgrp;
  fields >> state >> ppid >> pgrp;
  EXPECT_EQ(pgrp, stat.substr(0, stat.find(' '))) << stat;
  EXPECT_NE(std::stol(pgrp), static_cast<long>(getpgrp()));
}

TEST(ResumeCheck, HostileNamesAreNeverPassedAsGiven) {
  for (const char* hostile : {"-oProxyCommand=x", "a b", "$(x)", "", "x;y", "`id`", "a\nb", "--",
                              "-", "x\\y", "a/b", "caf\xc3\xa9"})
    EXPECT_EQ(check_host_name(hostile), "unnamed") << hostile;
  for (const char* plain : {"comp-1", "node.a_b:c@d+e-f", "x-", "0"})
    EXPECT_EQ(check_host_name(plain), plain);
  EXPECT_EQ(check_host_name(std::string("comp\0-1", 7)), "unnamed");
}

TEST(ResumeCheck, ATimeoutKillsTheWholeProcessGroup) {
  TempDir dir;
  const std::string check =
      script(dir.path, "sleep 100 &\necho $! >" + dir.path + "/grandchild\nsleep 100\n");
  const auto t0 = std::chrono::steady_clock::now();
  const auto run = run_check(check, "0x1", "comp-1", 2000);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  EXPECT_EQ(run.status, -1);
  EXPECT_NE(run.output.find("no answer within 2000 ms"), std::string::npos) << run.output;
  const auto grandchild = lines(slurp(dir.path + "/grandchild"));
  ASSERT_EQ(grandchild.size(), 1u);
  EXPECT_TRUE(dies_soon(grandchild[0])) << "the check's background sleep outlived it";
}

// The service stopping (CancelSignal) kills a check at once, its whole group with it, and no
// check starts after that.
TEST(ResumeCheck, ACancelKillsTheCheckAtOnce) {
  TempDir dir;
  const std::string check =
      script(dir.path, "sleep 100 &\necho $! >" + dir.path + "/grandchild\nsleep 100\n");
  CancelSignal stop;
  ASSERT_GE(stop.fd(), 0);
  std::thread stopper([&] {
    for (int i = 0; i < 500 && slurp(dir.path + "/grandchild").empty(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    stop.cancel();
  });
  const auto t0 = std::chrono::steady_clock::now();
  const auto run = run_check(check, "0x1", "comp-1", 60000, &stop);
  stopper.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  EXPECT_TRUE(run.cancelled);
  EXPECT_EQ(run.status, -1);
  EXPECT_NE(run.output.find("interrupted: the service is stopping"), std::string::npos)
      << run.output;
  const auto grandchild = lines(slurp(dir.path + "/grandchild"));
  ASSERT_EQ(grandchild.size(), 1u);
  EXPECT_TRUE(dies_soon(grandchild[0])) << "the check's background sleep outlived it";
  const auto after = run_check(check, "0x1", "comp-1", 60000, &stop);
  EXPECT_TRUE(after.cancelled);
  EXPECT_EQ(after.output, "not run: the service is stopping");
}

// A check that exits leaving something behind (holding its stdout open) is done when it exits:
// the rest of its group is killed, the service does not wait for the timeout.
TEST(ResumeCheck, WhatAFinishedCheckLeftBehindIsKilled) {
  TempDir dir;
  const std::string check =
      script(dir.path, "sleep 100 &\necho $! >" + dir.path + "/grandchild\necho passed\nexit 0\n");
  const auto t0 = std::chrono::steady_clock::now();
  const auto run = run_check(check, "0x1", "comp-1", 20000);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_EQ(run.output, "passed\n");
  const auto grandchild = lines(slurp(dir.path + "/grandchild"));
  ASSERT_EQ(grandchild.size(), 1u);
  EXPECT_TRUE(dies_soon(grandchild[0]));
}

TEST(ResumeCheck, ExitStatusSignalsAndMissingPrograms) {
  TempDir dir;
  auto run = run_check(script(dir.path, "echo 'DIMM errors' >&2\nexit 3\n"), "0x1", "h", 10000);
  EXPECT_EQ(run.status, 3);
  EXPECT_EQ(run.output, "DIMM errors\n");
  run = run_check(script(dir.path, "kill -9 $$\n"), "0x1", "h", 10000);
  EXPECT_EQ(run.status, -1);
  EXPECT_NE(run.output.find("killed by signal 9"), std::string::npos) << run.output;
  run = run_check(dir.path + "/absent", "0x1", "h", 10000);
  EXPECT_EQ(run.status, -1);
  EXPECT_NE(run.output.find("cannot run it"), std::string::npos) << run.output;
  // A process that ignores SIGCHLD cannot wait for the check: no status, never a pass.
  struct sigaction ignore {
  }, before{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGCHLD, &ignore, &before);
  run = run_check(script(dir.path, "exit 0\n"), "0x1", "h", 10000);
  sigaction(SIGCHLD, &before, nullptr);
  EXPECT_EQ(run.status, -1);
  EXPECT_NE(run.output.find("exit status was lost"), std::string::npos) << run.output;
  // Output beyond 4 KiB is read and dropped: the check never blocks on a full pipe.
  run = run_check(script(dir.path, "head -c 200000 /dev/zero | tr '\\0' x\nexit 0\n"), "0x1", "h",
                  10000);
  EXPECT_EQ(run.status, 0);
  EXPECT_EQ(run.output.size(), 4096u);
}

TEST(ResumeCheck, AProgramOthersMayChangeIsRefused) {
  TempDir dir;  // 0700, this process's user
  const std::string check = script(dir.path, "exit 0\n");
  EXPECT_EQ(check_program_refusal(check), "");
  EXPECT_EQ(check_program_refusal("/bin/true"), "");  // root's
  chmod(check.c_str(), 0775);
  auto why = check_program_refusal(check);
  EXPECT_EQ(why.rfind("resume_check " + check + " is writable by group", 0), 0u) << why;
  EXPECT_NE(why.find("(mode 0775): refused"), std::string::npos) << why;
  chmod(check.c_str(), 0757);
  why = check_program_refusal(check);
  EXPECT_NE(why.find("is writable by everyone (mode 0757): refused"), std::string::npos) << why;
  chmod(check.c_str(), 0755);
  // Its directory: whoever may write it may put another program in its place.
  chmod(dir.path.c_str(), 0777);
  why = check_program_refusal(check);
  EXPECT_NE(why.find("through its directory " + dir.path + ": refused"), std::string::npos) << why;
  chmod(dir.path.c_str(), 0770);
  EXPECT_NE(check_program_refusal(check).find("writable by group"), std::string::npos);
  // ... unless it is sticky, as /tmp is: others may not replace entries they do not own.
  chmod(dir.path.c_str(), 01777);
  EXPECT_EQ(check_program_refusal(check), "");
  chmod(dir.path.c_str(), 0700);
  // A link to a program in a directory others may write.
  TempDir open_dir;
  chmod(open_dir.path.c_str(), 0777);
  const std::string target = script(open_dir.path, "exit 0\n");
  const std::string link = dir.path + "/link";
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  EXPECT_NE(check_program_refusal(link).find("through its directory " + open_dir.path),
            std::string::npos);
  // Owned by another user.
  if (geteuid() == 0) {
    ASSERT_EQ(chown(check.c_str(), 4321, static_cast<gid_t>(-1)), 0);
    why = check_program_refusal(check);
    EXPECT_NE(why.find("is writable by uid 4321 (its owner): refused"), std::string::npos) << why;
  }
  EXPECT_NE(check_program_refusal(dir.path + "/absent").find("refused"), std::string::npos);
  EXPECT_NE(check_program_refusal("relative/check").find("refused"), std::string::npos);
  EXPECT_NE(check_program_refusal(dir.path).find("not a regular file"), std::string::npos);
}

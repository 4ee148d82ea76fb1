// laas-sdn's reload command: an argv run without a shell, with a timeout, its exit status and
// stderr captured for the log.
#include <gtest/gtest.h>

#include "sdn/reload.h"

using laas::sdn::run_reload;
using std::chrono::milliseconds;

TEST(SdnReload, TrueSucceeds) {
  const auto r = run_reload({"/bin/true"}, milliseconds(5000));
  EXPECT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.summary({"/bin/true"}).find("reload '/bin/true': ok in"), std::string::npos);
  EXPECT_TRUE(run_reload({"true"}, milliseconds(5000)).ok()) << "found in PATH";
}

TEST(SdnReload, FalseFailsWithItsStatus) {
  const auto r = run_reload({"/bin/false"}, milliseconds(5000));
  EXPECT_TRUE(r.started);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.error, "exit status 1");
}

TEST(SdnReload, CapturesStderrAndPassesArgumentsVerbatim) {
  const std::vector<std::string> argv = {"/bin/sh", "-c", "echo \"$0\" >&2; echo out; exit 3",
                                         "a;b $HOME `x`"};
  const auto r = run_reload(argv, milliseconds(5000));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.err, "a;b $HOME `x`\n");
  EXPECT_NE(r.summary(argv).find("exit status 3; stderr: a;b $HOME `x`"), std::string::npos)
      << r.summary(argv);
}

TEST(SdnReload, AMissingProgramSaysSo) {
  const auto r = run_reload({"/nonexistent/laas-reload", "x"}, milliseconds(5000));
  EXPECT_FALSE(r.started);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error, "cannot run /nonexistent/laas-reload: No such file or directory");
  EXPECT_FALSE(run_reload({"laas-no-such-reload-program"}, milliseconds(5000)).started);
  const auto empty = run_reload({}, milliseconds(5000));
  EXPECT_FALSE(empty.started);
  EXPECT_NE(empty.error.find("empty"), std::string::npos);
}

TEST(SdnReload, ASleeperIsKilledAtTheTimeout) {
  const auto r = run_reload({"/bin/sleep", "30"}, milliseconds(300));
  EXPECT_TRUE(r.started);
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.signal, SIGTERM);
  EXPECT_LT(r.seconds, 3.0);
  EXPECT_NE(r.error.find("timed out after 300 ms"), std::string::npos) << r.error;
}

TEST(SdnReload, OneIgnoringSigtermIsKilledToo) {
  const auto r = run_reload({"/bin/sh", "-c", "trap '' TERM; sleep 30"}, milliseconds(200));
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_LT(r.seconds, 4.0);
}

TEST(SdnReload, DoneWhenItExitsEvenIfItsChildKeepsStderr) {
  const auto r =
      run_reload({"/bin/sh", "-c", "sleep 2 & echo started >&2; exit 0"}, milliseconds(10000));
  EXPECT_TRUE(r.ok()) << r.error;
  EXPECT_LT(r.seconds, 1.5);
}

TEST(SdnReload, RunCommandCapturesStdoutWhichRunReloadDiscards) {
  const std::vector<std::string> argv = {"/bin/sh", "-c",
                                         "head -c 200000 /dev/zero | tr '\\0' x; echo e >&2"};
  const auto r = laas::sdn::run_command(argv, milliseconds(5000));
  EXPECT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.out, std::string(200000, 'x')) << "more than one pipe's worth, all of it";
  EXPECT_EQ(r.err, "e\n");
  EXPECT_FALSE(r.out_cut);
  EXPECT_EQ(run_reload(argv, milliseconds(5000)).out, "");
}

TEST(SdnReload, LastLineIsWhatAToolSaidLast) {
  EXPECT_EQ(laas::sdn::last_line("first\nsecond\n\n"), "second");
  EXPECT_EQ(laas::sdn::last_line("only"), "only");
  EXPECT_EQ(laas::sdn::last_line(""), "");
}

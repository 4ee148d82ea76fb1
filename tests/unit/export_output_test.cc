// `laasctl export -o`: atomic replacement of files, checked writes to devices.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "export/output.h"
#include "temp_files.h"

namespace laas::exports {
namespace {

namespace fs = std::filesystem;

struct Dir : test::TempDir {
  Dir() : test::TempDir("laas-output") {}
};
using test::slurp;

TEST(ExportOutput, ReplacesARegularFileAtomicallyKeepingItsMode) {
  Dir d;
  const std::string f = d.path + "/partitions.conf";
  write_output_file(f, "one\n");
  struct stat st;
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  ::chmod(f.c_str(), 0600);
  const auto inode = st.st_ino;
  // A reader holding the old file keeps seeing the old content: the new one is a new inode.
  std::ifstream reader(f);
  write_output_file(f, "two\n");
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_NE(st.st_ino, inode);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(slurp(f), "two\n");
  std::string old;
  std::getline(reader, old);
  EXPECT_EQ(old, "one");
  if (::geteuid() == 0) {  // root keeps the replaced file's owner
    ASSERT_EQ(::chown(f.c_str(), 65534, 65534), 0);
    write_output_file(f, "three\n");
    ASSERT_EQ(::stat(f.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 65534u);
    EXPECT_EQ(st.st_gid, 65534u);
  }
  // No temporary file is left behind.
  int files = 0;
  for (const auto& e : fs::directory_iterator(d.path)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST(ExportOutput, FollowsASymlinkToItsTarget) {
  Dir d;
  write_output_file(d.path + "/real.conf", "a\n");
  fs::create_symlink(d.path + "/real.conf", d.path + "/link.conf");
  write_output_file(d.path + "/link.conf", "b\n");
  EXPECT_TRUE(fs::is_symlink(d.path + "/link.conf"));
  EXPECT_EQ(slurp(d.path + "/real.conf"), "b\n");
}

TEST(ExportOutput, FailuresThrowAndLeaveNothingHalfWritten) {
  Dir d;
  // /dev/full: every write fails with ENOSPC; a device is written in place, and checked.
  try {
    write_output_file("/dev/full", "x\n");
    FAIL() << "/dev/full accepted the write";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write /dev/full: write: No space left"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(write_output_file("/dev/null", "x\n"));
  EXPECT_THROW(write_output_file(d.path, "x\n"), std::runtime_error);  // a directory
  EXPECT_THROW(write_output_file(d.path + "/missing/f.conf", "x\n"), std::runtime_error);
  EXPECT_FALSE(fs::exists(d.path + "/missing"));
}

TEST(ExportOutput, WritesFilesIntoADirectory) {
  Dir d;
  const std::string out = d.path + "/chains";
  write_output_dir(out, {{"a.conf", "A\n"}, {"b.conf", "B\n"}});
  EXPECT_EQ(slurp(out + "/a.conf"), "A\n");
  EXPECT_EQ(slurp(out + "/b.conf"), "B\n");
  write_output_file(d.path + "/plain", "x");
  EXPECT_THROW(write_output_dir(d.path + "/plain", {{"a.conf", "A\n"}}), std::runtime_error);
}

}  // namespace
}  // namespace laas::exports

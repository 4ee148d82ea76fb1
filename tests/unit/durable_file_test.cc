// util/durable_file.h, the one durable write of the state directory, tables.bin and the
// exports: the new content or the old, never a mix or a leftover; an exact mode whatever the
// umask, or the umask's; a failed directory sync said as NotDurableError with the file in place.
#include "util/durable_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "temp_files.h"

namespace {

namespace fs = std::filesystem;
using laas::test::slurp;
using laas::test::TempDir;
namespace util = laas::util;

unsigned mode_of(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0;
}

std::size_t entries(const std::string& dir) {
  return static_cast<std::size_t>(
      std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

struct RestoreFsync {
  ~RestoreFsync() { util::set_fsync_for_tests(nullptr); }
};

TEST(DurableFile, ReplacesWithAnExactModeOrTheUmasksAndLeavesNothingElse) {
  TempDir dir;
  const std::string file = dir.path + "/state.json";
  const mode_t old_umask = ::umask(077);
  util::write_file_atomically(file, "one", 0640);
  EXPECT_EQ(mode_of(file), 0640u);  // the umask took nothing of an exact mode
  util::write_file_atomically(file, "two", std::nullopt);
  EXPECT_EQ(mode_of(file), 0600u);  // 0666 less the umask
  ::umask(old_umask);
  EXPECT_EQ(slurp(file), "two");
  EXPECT_EQ(entries(dir.path), 1u);
}

TEST(DurableFile, AFailedFileSyncKeepsTheOldContentAndLeavesNoTemporaryFile) {
  TempDir dir;
  RestoreFsync restore;
  const std::string file = dir.path + "/tables.bin";
  util::write_file_atomically(file, "old", 0640);
  util::set_fsync_for_tests([](int, bool directory) { return directory ? 0 : (errno = EIO, -1); });
  try {
    util::write_file_atomically(file, "new", 0640);
    FAIL() << "a failed fsync was not reported";
  } catch (const util::NotDurableError& e) {
    FAIL() << "the file was replaced: " << e.what();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("fsync"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
  }
  EXPECT_EQ(slurp(file), "old");
  EXPECT_EQ(entries(dir.path), 1u);
}

TEST(DurableFile, AFailedDirectorySyncIsNotDurableWithTheNewFileInPlace) {
  TempDir dir;
  RestoreFsync restore;
  const std::string file = dir.path + "/allocations.json";
  util::set_fsync_for_tests([](int, bool directory) { return directory ? (errno = EIO, -1) : 0; });
  EXPECT_THROW(util::write_file_atomically(file, "new", 0640), util::NotDurableError);
  EXPECT_EQ(slurp(file), "new");
  EXPECT_EQ(entries(dir.path), 1u);
}

TEST(DurableFile, AStagedFileIsUnseenUntilPublished) {
  TempDir dir;
  const std::string file = dir.path + "/tables.bin";
  util::write_file_atomically(file, "old", 0640);
  const std::string staged = util::stage_durably(file, "new", 0640);
  EXPECT_EQ(slurp(file), "old");
  EXPECT_EQ(slurp(staged), "new");
  util::publish_durably(staged, file);
  EXPECT_EQ(slurp(file), "new");
  EXPECT_FALSE(fs::exists(staged));
}

TEST(DurableFile, ALinkPlantedAtANameIsNeverWrittenThrough) {
  TempDir dir;
  const std::string target = dir.path + "/elsewhere";
  util::write_file_atomically(target, "kept", 0640);
  const std::string file = dir.path + "/partitions.conf";
  fs::create_symlink(target, file);
  util::write_file_atomically(file, "new", 0640);  // replaces the link itself
  EXPECT_EQ(slurp(target), "kept");
  EXPECT_FALSE(fs::is_symlink(file));
  EXPECT_EQ(slurp(file), "new");
}

TEST(DurableFile, AMissingDirectoryIsNamed) {
  try {
    util::write_file_atomically("/nonexistent-laas-dir/state.json", "x", 0640);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-laas-dir/state.json"), std::string::npos)
        << e.what();
  }
}

}  // namespace

// stage_file / publish_staged_file / discard_staged_file: the plugin writes allocations.json
// while it computes the tables and replaces the file only once the routing succeeded. Until
// published, readers see the old content; a discarded stage leaves nothing behind. And
// replace_file, atomic without fsync.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "service/state_store.h"
#include "temp_files.h"

namespace laas::service {
namespace {

namespace fs = std::filesystem;

using test::slurp;
using TempDir = test::TempDir;

TEST(StagedFile, PublishedOnlyWhenAskedAndDiscardedWithoutTrace) {
  TempDir dir;
  const std::string file = dir.path + "/allocations.json";
  write_file_atomically(file, "old", 0644);
  stage_file(file, "new", 0644);
  EXPECT_EQ(slurp(file), "old");
  EXPECT_TRUE(fs::exists(file + ".tmp"));
  publish_staged_file(file);
  EXPECT_EQ(slurp(file), "new");
  EXPECT_FALSE(fs::exists(file + ".tmp"));

  stage_file(file, "newer", 0644);
  discard_staged_file(file);
  EXPECT_EQ(slurp(file), "new");
  EXPECT_FALSE(fs::exists(file + ".tmp"));
}

TEST(StagedFile, AFailedStageLeavesNothingAndPublishingNothingFails) {
  TempDir dir;
  const std::string file = dir.path + "/allocations.json";
  write_file_atomically(file, "old", 0644);
  set_fsync_for_tests([](int, bool) { return errno = EIO, -1; });
  EXPECT_THROW(stage_file(file, "new", 0644), std::runtime_error);
  set_fsync_for_tests(nullptr);
  EXPECT_FALSE(fs::exists(file + ".tmp"));
  EXPECT_THROW(publish_staged_file(file), std::runtime_error);
  EXPECT_EQ(slurp(file), "old");
}

// replace_file (the metrics textfile, rewritten under the service's lock): atomic, never
// synced -- a disk that stalls or fails fsync does not touch it.
TEST(StagedFile, ReplaceFileRenamesWithoutSyncing) {
  TempDir dir;
  const std::string file = dir.path + "/laas.prom";
  static int syncs;
  syncs = 0;
  set_fsync_for_tests([](int, bool) { return ++syncs, errno = EIO, -1; });
  replace_file(file, "one\n", 0644);
  replace_file(file, "two\n", 0644);
  EXPECT_THROW(write_file_atomically(dir.path + "/durable", "x", 0644), std::runtime_error);
  set_fsync_for_tests(nullptr);
  EXPECT_EQ(syncs, 1);  // write_file_atomically's only
  EXPECT_EQ(slurp(file), "two\n");
  EXPECT_EQ(fs::status(file).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                fs::perms::others_read);
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir.path)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);  // no temporary file left
}

}  // namespace
}  // namespace laas::service

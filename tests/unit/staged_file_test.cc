// stage_file / publish_staged_file / discard_staged_file: the plugin writes allocations.json
// while it computes the tables and replaces the file only once the routing succeeded. Until
// published, readers see the old content; a discarded stage leaves nothing behind.
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

}  // namespace
}  // namespace laas::service

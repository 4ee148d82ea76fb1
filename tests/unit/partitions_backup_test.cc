// The administrator's partitions.conf before LaaS: kept once as <file>.pre-laas when LaaS first
// replaces it, the way back at uninstall (docs/admin-guide.md, "Uninstall").
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "demo_views.h"
#include "service/tenant_service.h"
#include "temp_files.h"

using namespace laas::service;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A site's own file: valid as LaaS's base (no ALL=full), with a comment LaaS keeps verbatim.
constexpr const char* kSiteFile =
    "# site partitions, hand written\n"
    "Default=0x7fff, ipoib : ALL_CAS=limited, ALL_SWITCHES=limited, SELF=full ;\n"
    "storage=0x0010 : SELF=full ;\n";

class PartitionsBackupTest : public ::testing::Test {
 protected:
  std::string file() const { return dir.path + "/partitions.conf"; }
  std::string backup() const { return file() + ".pre-laas"; }
  void start() {
    ServiceConfig c;
    c.state_dir = dir.path;
    c.default_wait_ms = 100;
    c.exports.managed_partitions_file = file();
    service = std::make_unique<TenantService>(
        c, [this](LogLevel, const std::string& m) { logs.push_back(m); });
    service->on_topology(laas::test::demo_view());
  }
  json call(const std::string& method, json params) {
    params["wait"] = false;
    return service->handle({{"v", 1}, {"id", "t"}, {"method", method}, {"params", params}},
                           Caller{0, true});
  }
  int logged(const std::string& text) const {
    return static_cast<int>(std::count_if(logs.begin(), logs.end(), [&](const std::string& m) {
      return m.find(text) != std::string::npos;
    }));
  }
  laas::test::TempDir dir{"laas-pre-laas"};
  std::vector<std::string> logs;
  std::unique_ptr<TenantService> service;
};

}  // namespace

TEST_F(PartitionsBackupTest, TheAdministratorsFileIsKeptOnceAtTheFirstWrite) {
  std::ofstream(file()) << kSiteFile;
  ::chmod(file().c_str(), 0640);
  start();
  ASSERT_TRUE(call("tenant.add", {{"name", "a"}, {"hosts", 3}})["ok"]);
  EXPECT_EQ(laas::test::slurp(backup()), kSiteFile);
  struct stat st {};
  ASSERT_EQ(::stat(backup().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);  // the very file, not a copy of its text
  EXPECT_EQ(logged("kept the original " + file() + " as " + backup()), 1);
  const std::string managed = laas::test::slurp(file());
  EXPECT_NE(managed.find("laas_a="), std::string::npos) << managed;
  EXPECT_NE(managed.find("# site partitions, hand written"), std::string::npos) << managed;

  // Later writes, and a restart that writes again, leave the backup alone and say nothing.
  ASSERT_TRUE(call("tenant.add", {{"name", "b"}, {"hosts", 3}})["ok"]);
  start();
  ASSERT_TRUE(call("tenant.remove", {{"name", "a"}})["ok"]);
  EXPECT_EQ(laas::test::slurp(backup()), kSiteFile);
  EXPECT_EQ(logged("kept the original"), 1);
}

TEST_F(PartitionsBackupTest, AnExistingBackupIsNeverOverwritten) {
  std::ofstream(file()) << kSiteFile;
  std::ofstream(backup()) << "# the first original\n";
  start();
  ASSERT_TRUE(call("tenant.add", {{"name", "a"}, {"hosts", 3}})["ok"]);
  EXPECT_EQ(laas::test::slurp(backup()), "# the first original\n");
  EXPECT_EQ(logged("kept the original"), 0);
}

TEST_F(PartitionsBackupTest, NoFileBeforeLaasMeansNoBackup) {
  start();
  ASSERT_TRUE(call("tenant.add", {{"name", "a"}, {"hosts", 3}})["ok"]);
  EXPECT_TRUE(fs::exists(file()));
  EXPECT_FALSE(fs::exists(backup()));
  EXPECT_EQ(logged("kept the original"), 0);
}

// A file LaaS wrote (its markers are in it) is not the administrator's: after the backup was
// put back and removed at an uninstall that left LaaS's file, a reinstall saves nothing.
TEST_F(PartitionsBackupTest, AFileLaasWroteIsNotTakenForTheOriginal) {
  start();
  ASSERT_TRUE(call("tenant.add", {{"name", "a"}, {"hosts", 3}})["ok"]);
  ASSERT_FALSE(fs::exists(backup()));
  start();
  ASSERT_TRUE(call("tenant.add", {{"name", "b"}, {"hosts", 3}})["ok"]);
  EXPECT_FALSE(fs::exists(backup()));
}

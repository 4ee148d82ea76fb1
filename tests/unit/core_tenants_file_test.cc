// core/tenants_file.h alone, over a TenantService on a model fabric: what a changed
// tenants.yaml gives the service, what an untrustworthy one is refused, and when the watcher
// gets to ask for a re-route.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/tenants_file.h"
#include "demo_views.h"
#include "temp_files.h"

using namespace laas;
using laas::core::TenantsFile;

namespace {

struct TenantsFileFixture {
  test::TempDir dir{"laas-tenants-file"};
  core::Config config;
  std::unique_ptr<service::TenantService> service;
  std::unique_ptr<TenantsFile> file;
  std::vector<std::string> info, warnings;

  TenantsFileFixture() {
    config.state_dir = dir.path;
    service::ServiceConfig sc;
    sc.state_dir = dir.path;
    service =
        std::make_unique<service::TenantService>(sc, [](service::LogLevel, const std::string&) {});
    service->on_topology(test::demo_view());
    file = std::make_unique<TenantsFile>(config, *service,
                                         [](service::LogLevel, const std::string&) {});
  }
  // A new version of the file (another inode, as an editor's save is).
  void write(const std::string& text) {
    const std::string path = config.tenants_file();
    std::ofstream(path + ".new") << text;
    std::rename((path + ".new").c_str(), path.c_str());
  }
  void feed() {
    info.clear();
    warnings.clear();
    file->feed(info, warnings);
  }
  std::vector<std::string> tenants() const { return service->tenant_names(); }
};

bool mentions(const std::vector<std::string>& lines, const std::string& what) {
  for (const auto& l : lines)
    if (l.find(what) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(TenantsFile, ListedTenantsAreAddedAndDroppedOnesRemoved) {
  TenantsFileFixture f;
  f.write("- name: A\n  hosts: 4\n- name: B\n  hosts: 2\n");
  f.feed();
  EXPECT_TRUE(mentions(f.info, "read 2 tenant(s)"));
  EXPECT_TRUE(f.warnings.empty()) << f.warnings[0];
  EXPECT_EQ(f.tenants(), (std::vector<std::string>{"A", "B"}));
  f.feed();  // the same version: not read again
  EXPECT_TRUE(f.info.empty());
  f.write("- name: B\n  hosts: 2\n");
  f.feed();
  EXPECT_EQ(f.tenants(), std::vector<std::string>{"B"});
}

// A tenant added over the socket is not the file's: a file that never listed it leaves it.
TEST(TenantsFile, TenantsAddedElsewhereAreLeftAlone) {
  TenantsFileFixture f;
  ASSERT_TRUE(f.service->add_tenant("S", 2, {}, service::Caller{0, true}).ok);
  f.write("[]\n");
  f.feed();
  EXPECT_EQ(f.tenants(), std::vector<std::string>{"S"});
}

// An empty, cut-off or vanished file that listed tenants is no list at all.
TEST(TenantsFile, AnUntrustworthyFileKeepsTheTenantsItListed) {
  TenantsFileFixture f;
  f.write("- name: A\n  hosts: 4\n");
  f.feed();
  ASSERT_EQ(f.tenants(), std::vector<std::string>{"A"});
  f.write("");
  f.feed();
  EXPECT_TRUE(mentions(f.warnings, "tenants.yaml is empty; the 1 tenant(s) it listed are kept"));
  f.write("- name: A\n  hosts: 4");
  f.feed();
  EXPECT_TRUE(mentions(f.warnings, "does not end with a newline"));
  std::remove(f.config.tenants_file().c_str());
  f.feed();
  EXPECT_TRUE(mentions(f.warnings, "does not exist"));
  EXPECT_EQ(f.tenants(), std::vector<std::string>{"A"});
  f.write("[]\n");  // the explicit way to remove them all
  f.feed();
  EXPECT_TRUE(f.tenants().empty());
}

// The list last applied comes from tenants.yaml.applied: a tenant dropped from the file while
// the SM was down is released at the next start, and the new list is recorded.
TEST(TenantsFile, TheAppliedListReleasesTenantsDroppedMeanwhile) {
  TenantsFileFixture f;
  ASSERT_TRUE(f.service->add_tenant("A", 4, {}, service::Caller{0, true}).ok);
  f.file->adopt_applied({"A"});
  f.write("- name: B\n  hosts: 2\n");
  f.feed();
  EXPECT_EQ(f.tenants(), std::vector<std::string>{"B"});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (core::load_applied(f.file->applied_path()) != std::set<std::string>{"B"} &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(core::load_applied(f.file->applied_path()), std::set<std::string>{"B"});
}

// The watcher asks for a re-route once per version of the file, and only after a first
// routing run (which reads the file anyway).
TEST(TenantsFile, AChangeIsClaimedOncePerVersion) {
  TenantsFileFixture f;
  f.write("- name: A\n  hosts: 4\n");
  EXPECT_FALSE(f.file->claim_change(/*routed_once=*/false));
  EXPECT_FALSE(f.file->changed(false));
  EXPECT_TRUE(f.file->changed(true));
  EXPECT_TRUE(f.file->claim_change(true));
  EXPECT_FALSE(f.file->claim_change(true));
  f.feed();  // the run reads it
  EXPECT_FALSE(f.file->changed(true));
  f.write("- name: A\n  hosts: 5\n");
  EXPECT_TRUE(f.file->claim_change(true));
}

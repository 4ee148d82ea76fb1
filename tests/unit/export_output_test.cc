// `laasctl export -o`: files replaced by new ones atomically, links refused, checked writes to
// devices.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
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

// Sets the umask for one scope.
struct Umask {
  explicit Umask(mode_t m) : old(::umask(m)) {}
  ~Umask() { ::umask(old); }
  mode_t old;
};

TEST(ExportOutput, ReplacesARegularFileWithANewOne) {
  Dir d;
  Umask umask(022);
  const std::string f = d.path + "/partitions.conf";
  write_output_file(f, "one\n");
  struct stat st;
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  ::chmod(f.c_str(), 0600);
  const auto inode = st.st_ino;
  // A reader holding the old file keeps seeing the old content: the new one is a new inode,
  // with the mode a new file gets (the old one's is not carried over).
  std::ifstream reader(f);
  write_output_file(f, "two\n");
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_NE(st.st_ino, inode);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  EXPECT_EQ(slurp(f), "two\n");
  std::string old;
  std::getline(reader, old);
  EXPECT_EQ(old, "one");
  if (::geteuid() == 0) {  // nor its owner: the new file is the caller's
    ASSERT_EQ(::chown(f.c_str(), 65534, 65534), 0);
    write_output_file(f, "three\n");
    ASSERT_EQ(::stat(f.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 0u);
    EXPECT_EQ(st.st_gid, ::getegid());
  }
  // No temporary file is left behind.
  int files = 0;
  for (const auto& e : fs::directory_iterator(d.path)) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

// A set-id file is replaced by a plain new one: exporting over a 04755 file must not leave
// a set-uid file with the export's content.
TEST(ExportOutput, NeverCarriesSetIdBits) {
  Dir d;
  Umask umask(022);
  const std::string f = d.path + "/tool";
  std::ofstream(f) << "#!/bin/sh\n";
  ASSERT_EQ(::chmod(f.c_str(), 04755), 0);
  struct stat st;
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  ASSERT_EQ(st.st_mode & 07777, 04755u);
  const auto inode = st.st_ino;
  write_output_file(f, "export\n");
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_NE(st.st_ino, inode);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  EXPECT_EQ(st.st_uid, ::geteuid());
  EXPECT_EQ(slurp(f), "export\n");
  // The umask is what limits the new file.
  Umask tight(077);
  write_output_file(f, "private\n");
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

// A link planted where the export goes (in /tmp, say) must not redirect root's write.
TEST(ExportOutput, RefusesASymlink) {
  Dir d;
  const std::string target = d.path + "/shadow", link = d.path + "/link.conf";
  std::ofstream(target) << "root:x:0:\n";
  fs::create_symlink(target, link);
  try {
    write_output_file(link, "b\n");
    FAIL() << "wrote through a symlink";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write " + link + ": it is a symbolic link"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(slurp(target), "root:x:0:\n");
  // A dangling link: nothing is created where it points.
  const std::string dangling = d.path + "/dangling.conf", nowhere = d.path + "/created";
  fs::create_symlink(nowhere, dangling);
  EXPECT_THROW(write_output_file(dangling, "b\n"), std::runtime_error);
  EXPECT_FALSE(fs::exists(nowhere));
  // Nor into a linked directory (routing-chains -o DIR).
  fs::create_directory(d.path + "/real");
  fs::create_directory_symlink(d.path + "/real", d.path + "/chains");
  EXPECT_THROW(write_output_dir(d.path + "/chains", {{"a.conf", "A\n"}}), std::runtime_error);
  EXPECT_FALSE(fs::exists(d.path + "/real/a.conf"));
  // Only text files, character devices and FIFOs are written: not a socket.
  const std::string sock = d.path + "/sock";
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, sock.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_THROW(write_output_file(sock, "x\n"), std::runtime_error);
  ::close(fd);
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

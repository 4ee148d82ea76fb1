#include "service/identity.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

namespace laas::service {
namespace {

// NSS may need more than sysconf's hint (long GECOS fields, large LDAP groups): grow on ERANGE
// up to a bound, so a hostile directory entry cannot make us allocate without end.
constexpr size_t kMaxLookupBuffer = 1 << 20;

size_t initial_size(int name) {
  const long hint = ::sysconf(name);
  return hint > 0 ? static_cast<size_t>(hint) : 4096;
}

}  // namespace

bool user_in_group(const std::string& user, gid_t primary, gid_t wanted, const GroupListFn& list) {
  if (primary == wanted) return true;
  int count = 64;
  std::vector<gid_t> groups;
  for (int attempt = 0; attempt < 8; ++attempt) {
    groups.assign(static_cast<size_t>(count), 0);
    int n = count;
    if (list(user.c_str(), primary, groups.data(), &n) >= 0) {
      for (int i = 0; i < n && i < count; ++i)
        if (groups[static_cast<size_t>(i)] == wanted) return true;
      return false;
    }
    // Too small: n is the number needed (glibc); grow at least geometrically in case a
    // membership was added between the two calls.
    count = std::max(n, count * 2);
    if (count > 1 << 16) return false;
  }
  return false;
}

std::optional<UserEntry> lookup_user(uid_t uid) {
  std::vector<char> buf(initial_size(_SC_GETPW_R_SIZE_MAX));
  for (;;) {
    passwd entry{};
    passwd* found = nullptr;
    const int rc = ::getpwuid_r(uid, &entry, buf.data(), buf.size(), &found);
    if (rc == ERANGE && buf.size() < kMaxLookupBuffer) {
      buf.resize(buf.size() * 2);
      continue;
    }
    if (rc != 0 || !found) return std::nullopt;
    return UserEntry{found->pw_name, found->pw_gid};
  }
}

std::optional<gid_t> lookup_group(const std::string& name) {
  std::vector<char> buf(initial_size(_SC_GETGR_R_SIZE_MAX));
  for (;;) {
    group entry{};
    group* found = nullptr;
    const int rc = ::getgrnam_r(name.c_str(), &entry, buf.data(), buf.size(), &found);
    if (rc == ERANGE && buf.size() < kMaxLookupBuffer) {
      buf.resize(buf.size() * 2);
      continue;
    }
    if (rc != 0 || !found) return std::nullopt;
    return found->gr_gid;
  }
}

Access access_of(uid_t uid, gid_t peer_gid, std::optional<gid_t> write_group,
                 std::optional<gid_t> read_group) {
  if (uid == 0) return Access::kWrite;
  if (write_group && peer_gid == *write_group) return Access::kWrite;
  if (!write_group && !read_group) return Access::kNone;
  // Otherwise the group database: the user looked up once, its groups for each group asked.
  const auto user = lookup_user(uid);
  const auto member = [&](std::optional<gid_t> group) {
    if (!group) return false;
    if (peer_gid == *group) return true;
    return user && user_in_group(user->name, user->gid, *group,
                                 [](const char* u, gid_t g, gid_t* out, int* n) {
                                   return ::getgrouplist(u, g, out, n);
                                 });
  };
  if (member(write_group)) return Access::kWrite;
  return member(read_group) ? Access::kRead : Access::kNone;
}

bool may_change_state(uid_t uid, gid_t peer_gid, std::optional<gid_t> group) {
  return access_of(uid, peer_gid, group, std::nullopt) == Access::kWrite;
}

}  // namespace laas::service

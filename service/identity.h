// Who is on the other end of the control socket, looked up in a way that is safe from the
// socket's concurrent worker threads: getpwuid_r / getgrnam_r with buffers that grow on
// ERANGE, and getgrouplist without a fixed cap on the number of groups.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>

namespace laas::service {

// The signature of getgrouplist(3): fills up to *count gids; when they do not fit it returns
// -1 and sets *count to the number needed.
using GroupListFn = std::function<int(const char* user, gid_t primary, gid_t* groups, int* count)>;

// True when `user` (primary group `primary`) belongs to `wanted`, whatever the number of groups.
bool user_in_group(const std::string& user, gid_t primary, gid_t wanted, const GroupListFn& list);

// The user name and primary group of `uid` (getpwuid_r); nullopt when unknown.
struct UserEntry {
  std::string name;
  gid_t gid = 0;
};
std::optional<UserEntry> lookup_user(uid_t uid);

// The gid of group `name` (getgrnam_r); nullopt when there is no such group.
std::optional<gid_t> lookup_group(const std::string& name);

// What a peer of the control socket may do.
enum class Access { kNone, kRead, kWrite };

// Root: everything. Otherwise the peer's group (SO_PEERCRED) or the uid's groups in the group
// database: `write_group` may change tenants and hosts (and read), `read_group` may read;
// anyone else nothing. An absent group (nullopt) has no members.
Access access_of(uid_t uid, gid_t peer_gid, std::optional<gid_t> write_group,
                 std::optional<gid_t> read_group);

// Root, the socket group as primary group, or a member of it.
bool may_change_state(uid_t uid, gid_t peer_gid, std::optional<gid_t> group);

}  // namespace laas::service

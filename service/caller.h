// Who asks: what the socket learned from the peer's credentials (SO_PEERCRED and the socket
// groups), or a routing run changing tenants itself. Every request handler is given one.
#pragma once

namespace laas::service {

struct Caller {
  long uid = -1;
  bool may_write = false;  // change tenants and hosts (root, the socket group)
  bool may_read = true;    // false: in neither socket group, every request is refused
  // A routing run changing tenants (the tenants file): that run routes its own changes, so
  // none asks for another run, and none waits for one.
  bool routes_itself = false;
};

}  // namespace laas::service

// OpenSM's min-hop matrices (sw->hops), filled from breadth-first distances instead of
// OpenSM's own relaxation pass where both give the same values.
#pragma once

namespace laas::plugin {

// The routing engine's build_lid_matrices callback (context: the Plugin); 0 when the matrices
// are filled, 1 when OpenSM must build them.
int build_lid_matrices(void* context);

}  // namespace laas::plugin

// Reads `ibnetdiscover` output, and ibsim net files (the same format without GUIDs or LIDs),
// into a Fabric.
//
// Node GUIDs come from the switchguid=/caguid=/rtguid= lines (else from an "S-<hex>"/"H-<hex>"
// node id, else they are synthesized in file order), port GUIDs from "[port](guid)", LIDs
// from the "# ... lid N" comments (a switch's on its header line, a CA port's on its port
// line). A node's name is its node description (the quoted string in the comment) when the
// file has one, else its id. Cables may be listed from one side or both; both sides must
// agree. Every error names the source and the line.
#pragma once

#include <istream>
#include <stdexcept>
#include <string>

#include "topology/fabric.h"

namespace laas::topology {

class ParseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `source` names the input in error messages (a file name). Throws ParseError.
Fabric read_ibnetdiscover(std::istream& in, const std::string& source = "<input>");
Fabric read_ibnetdiscover_file(const std::string& path);

}  // namespace laas::topology

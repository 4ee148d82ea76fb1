// Text helpers every reader shares.
#pragma once

#include <string>
#include <string_view>

namespace laas::util {

// `s` without leading and trailing white space (std::isspace: blank, tab, CR, LF, VT, FF).
std::string trim(std::string_view s);

// The whole of the file at `path` into *text: 0, or the errno that stopped it (ENOENT,
// EACCES, EIO, ESTALE, EISDIR for a directory in its place). A file that cannot be read is
// never read as an empty one.
int read_whole_file(const std::string& path, std::string* text);

}  // namespace laas::util

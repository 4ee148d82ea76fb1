// Text helpers every reader shares.
#pragma once

#include <string>
#include <string_view>

namespace laas::util {

// `s` without leading and trailing white space (std::isspace: blank, tab, CR, LF, VT, FF).
std::string trim(std::string_view s);

}  // namespace laas::util

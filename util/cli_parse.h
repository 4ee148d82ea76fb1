// Command-line parsing shared by the project's tools: a usage error exits 2, the status every
// man page documents (CLI11's own exit codes for parse errors are 100 and up).
#pragma once

#include <CLI/CLI.hpp>

namespace laas::util {

// Parses argv into app. Returns -1 when the tool should go on, else its exit status: 0 after
// --help, 2 after a usage error (CLI11 has printed the message either way).
inline int parse_command_line(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return -1;
}

}  // namespace laas::util

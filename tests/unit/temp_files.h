// Scratch directories and file contents, shared by the unit tests that write files.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace laas::test {

// A fresh directory /tmp/PREFIX-XXXXXX, removed with everything in it at the end of the scope.
struct TempDir {
  explicit TempDir(const std::string& prefix = "laas-test") {
    std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp " + tmpl + " failed");
    path = tmpl;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  // Writes `text` as the whole content of the file `name` in this directory.
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path + "/" + name) << text;
  }
  std::string path;
};

// The whole content of a file ("" when it cannot be read).
inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace laas::test

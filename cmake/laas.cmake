# The one way every CMakeLists.txt of the project declares what it builds and tests (as
# rdma-core's buildlib/ does): libraries, executables, the plugin module, man pages and tests.
# A directory lists its parts with these functions and nothing else decides their flags, where
# they install or how ctest sees them.
include(CMakeParseArguments)
include(GNUInstallDirs)

# laas_precompile(NAME header...): with clang, the target's files compiled with these headers
# precompiled (parsed, and their templates instantiated, once for the target instead of once a
# file). Each file still includes what it uses. Measured on the 2-core machine (ccache off,
# test.sh's flags), it pays only where many files include several big headers: the unit
# tests' 59 files with GoogleTest, GoogleMock and nlohmann/json precompiled, under clang with
# ASan and UBSan, 217 s -> 182 s; nlohmann/json alone in laas_service, laas_core and
# laas_export made each slower (74 -> 79 s, 22 -> 24 s, 18 -> 21 s). Not with gcc: its
# precompiled header (120 MB for the unit tests') costs as much to load as the parsing it
# saves (the unit tests 151 s -> 157 s, laas_service 46 -> 51 s).
# -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON turns it off.
function(laas_precompile name)
  if(NOT ARGN OR NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    return()
  endif()
  target_precompile_headers(${name} PRIVATE ${ARGN})
  # ccache caches a file compiled against clang's PCH only when the PCH carries no timestamp
  # (ccache's manual, "Precompiled headers"), and only under the sloppiness the top
  # CMakeLists.txt gives it.
  target_compile_options(${name} PRIVATE "SHELL:-Xclang -fno-pch-timestamp")
endfunction()

# laas_unity(NAME [n]): with -DLAAS_UNITY_BUILD=ON, the target's files compiled
# LAAS_UNITY_BATCH_SIZE to a translation unit (CMake's unity build), so that the headers every
# file includes (the standard library, nlohmann/json, GoogleTest) are parsed and their inline
# functions compiled once a batch instead of once a file. n, a target's own UNITY, applies
# whatever the option. Off by default: a developer's incremental build recompiles one file, not
# its batch, and the Debian package builds per file. Measured on the 2-core machine, from
# scratch without ccache, with scripts/test.sh's gcc flags: 297 s wall, 505 s user + 61 s sys;
# the per-file build the same day, with other builds beside it: 496 s wall, 935 CPU-seconds
# (a fresh-clone test.sh's unity build: 295 s, the last per-file one 414 s).
# Under it, names at file scope (anonymous namespaces and static functions included) must
# differ from one file of a target to the next.
option(LAAS_UNITY_BUILD "Compile each target's files several to a translation unit" OFF)
# 8: the unit tests' 60-odd files make 8 translation units, enough that on 2 cores the last
# one does not keep a single core busy for long after the other has finished.
set(LAAS_UNITY_BATCH_SIZE 8 CACHE STRING "Files to a translation unit under LAAS_UNITY_BUILD")
function(laas_unity name)
  if(ARGN)
    set(size ${ARGN})
  elseif(LAAS_UNITY_BUILD)
    set(size ${LAAS_UNITY_BATCH_SIZE})
  else()
    return()
  endif()
  set_target_properties(${name} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${size})
  # gcc warns of a class deriving from one in an anonymous namespace when the derived class is
  # defined in a file other than the one compiled, as it would be in a header; a unity build
  # includes every .cc, so each GoogleTest TEST_F on a fixture of its own file would warn.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${name} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-subobject-linkage>)
  endif()
endfunction()

# laas_add_library(NAME SOURCES src... [PUBLIC lib...] [PRIVATE lib...])
# A static library of the project; its users include its headers as "dir/file.h".
function(laas_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC;PRIVATE" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_PUBLIC} PRIVATE ${ARG_PRIVATE})
  laas_unity(${name})
endfunction()

# laas_add_executable(NAME SOURCES src... [LINK lib...] [PRECOMPILE header...] [UNITY n]
#                     [INSTALL])
# A program; INSTALL puts it in bin/ (tools and test helpers are not installed). UNITY n
# compiles its files n to a translation unit (CMake's unity build): for the programs whose
# every file includes CLI11, whose inline functions gcc and clang otherwise compile again in
# each file. Names at file scope must then differ from one file to the next.
function(laas_add_executable name)
  cmake_parse_arguments(ARG "INSTALL" "UNITY" "SOURCES;LINK;PRECOMPILE" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PRIVATE ${ARG_LINK})
  laas_precompile(${name} ${ARG_PRECOMPILE})
  laas_unity(${name} ${ARG_UNITY})
  if(ARG_INSTALL)
    install(TARGETS ${name} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endfunction()

# laas_add_plugin(NAME SOURCES src... VERSION_SCRIPT file [LINK lib...] [INCLUDE dir...])
# A module another program loads (OpenSM loads libNAME.so). It exports what its version
# script names and nothing else: no C++ symbol of the project, nor of the static libraries it
# carries, may interpose on the host program's or another plugin's. The unit test
# packaging.plugin_exports checks the built module's dynamic symbols against that.
function(laas_add_plugin name)
  cmake_parse_arguments(ARG "" "VERSION_SCRIPT" "SOURCES;LINK;INCLUDE" ${ARGN})
  add_library(${name} MODULE ${ARG_SOURCES})
  set_target_properties(${name} PROPERTIES PREFIX "lib" OUTPUT_NAME ${name}
                                           CXX_VISIBILITY_PRESET hidden
                                           LINK_DEPENDS ${ARG_VERSION_SCRIPT})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR} ${ARG_INCLUDE})
  target_link_libraries(${name} PRIVATE ${ARG_LINK})
  laas_unity(${name})
  target_link_options(${name} PRIVATE "-Wl,--version-script=${ARG_VERSION_SCRIPT}"
                      "-Wl,--exclude-libs,ALL")
  install(TARGETS ${name} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endfunction()

# laas_add_man_page(PAGE...): docs/PAGE installed in the section its suffix names
# (laasctl.8 in man8).
function(laas_add_man_page)
  foreach(page ${ARGN})
    string(REGEX MATCH "[0-9]$" section ${page})
    if(NOT section)
      message(FATAL_ERROR "laas_add_man_page: ${page} has no section suffix")
    endif()
    install(FILES ${PROJECT_SOURCE_DIR}/docs/${page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section})
  endforeach()
endfunction()

# laas_add_test(NAME LABELS label... [TIMEOUT s] [SKIP_RETURN_CODE n] [RUN_SERIAL]
#               [ENVIRONMENT VAR=value...] [PASS_REGULAR_EXPRESSION re] COMMAND cmd arg...)
# One ctest test. Its labels are how scripts/test.sh, .ci/run, debian/rules and the RPM's
# %check select tests (unit, sim, e2e, admin, exports, integration, packaging): every test has
# at least one.
function(laas_add_test name)
  # PARSE_ARGV keeps a ';' inside one argument (a topology such as xgft(3;4,4;1,4)).
  cmake_parse_arguments(PARSE_ARGV 1 ARG "RUN_SERIAL"
                        "TIMEOUT;SKIP_RETURN_CODE;PASS_REGULAR_EXPRESSION" "LABELS;ENVIRONMENT;COMMAND")
  if(NOT ARG_LABELS OR NOT ARG_COMMAND)
    message(FATAL_ERROR "laas_add_test(${name}): LABELS and COMMAND are required")
  endif()
  add_test(NAME ${name} COMMAND ${ARG_COMMAND})
  # One property at a time, quoted: LABELS and ENVIRONMENT are lists.
  set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}")
  foreach(p TIMEOUT SKIP_RETURN_CODE PASS_REGULAR_EXPRESSION ENVIRONMENT)
    if(DEFINED ARG_${p})
      set_tests_properties(${name} PROPERTIES ${p} "${ARG_${p}}")
    endif()
  endforeach()
  if(ARG_RUN_SERIAL)
    set_tests_properties(${name} PROPERTIES RUN_SERIAL TRUE)
  endif()
endfunction()

# laas_add_unit_test(NAME SOURCES src... [LINK lib...] [DEFINITIONS def...])
# A GoogleTest executable whose tests ctest discovers one by one after the build, each under
# its GoogleTest name with the label unit. GoogleTest, GoogleMock and nlohmann/json are
# precompiled under clang: nearly every test file includes them. LAAS_TEST_FILE_FLAGS are added
# to the test files' own flags, not to the libraries they test (scripts/test.sh's gcc build:
# -O1). The inline code of the headers a test file includes is compiled with them too: at -O0
# the ASan pass's property tests ran twice as long, so that pass leaves them out.
set(LAAS_TEST_FILE_FLAGS "" CACHE STRING "Extra compiler flags for the unit tests' own files, e.g. -O1")
function(laas_add_unit_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LINK;DEFINITIONS" ${ARGN})
  find_package(GTest REQUIRED)
  include(GoogleTest)
  laas_add_executable(${name} SOURCES ${ARG_SOURCES} LINK ${ARG_LINK} GTest::gtest_main GTest::gmock
                      PRECOMPILE <gtest/gtest.h> <gmock/gmock.h> <nlohmann/json.hpp>)
  target_compile_definitions(${name} PRIVATE ${ARG_DEFINITIONS})
  separate_arguments(test_file_flags UNIX_COMMAND "${LAAS_TEST_FILE_FLAGS}")
  target_compile_options(${name} PRIVATE ${test_file_flags})
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS unit)
endfunction()

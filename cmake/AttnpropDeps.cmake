# Locates attnprop's dependencies (all Debian packages, see scripts/install-deps.sh) and wraps
# them in imported targets so that the rest of the build names one target per concern.
find_package(Boost 1.74 REQUIRED)
find_path(GMP_INCLUDE_DIR gmp.h REQUIRED)
find_library(GMP_LIBRARY gmp REQUIRED)
find_path(MPFR_INCLUDE_DIR mpfr.h REQUIRED)
find_library(MPFR_LIBRARY mpfr REQUIRED)
find_path(ARB_INCLUDE_DIR arb.h PATH_SUFFIXES arb flint REQUIRED)
find_library(ARB_LIBRARY NAMES flint-arb arb REQUIRED)
find_library(FLINT_LIBRARY flint REQUIRED)
find_package(fmt REQUIRED)

if(NOT TARGET attnprop::deps_numeric)
  add_library(attnprop_deps_numeric INTERFACE)
  target_include_directories(attnprop_deps_numeric INTERFACE
    ${GMP_INCLUDE_DIR} ${MPFR_INCLUDE_DIR} ${ARB_INCLUDE_DIR})
  target_link_libraries(attnprop_deps_numeric INTERFACE
    Boost::headers ${ARB_LIBRARY} ${FLINT_LIBRARY} ${MPFR_LIBRARY} ${GMP_LIBRARY} fmt::fmt)
  add_library(attnprop::deps_numeric ALIAS attnprop_deps_numeric)
endif()

find_package(CLI11 QUIET CONFIG)
if(NOT TARGET attnprop::deps_cli)
  add_library(attnprop_deps_cli INTERFACE)
  if(TARGET CLI11::CLI11)
    target_link_libraries(attnprop_deps_cli INTERFACE CLI11::CLI11)
  else()
    find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
    target_include_directories(attnprop_deps_cli INTERFACE ${CLI11_INCLUDE_DIR})
  endif()
  add_library(attnprop::deps_cli ALIAS attnprop_deps_cli)
endif()

# Precompiled headers for the targets of many translation units. Nearly every translation unit of
# attnprop parses the same 200 000 lines of the standard library, Boost.Multiprecision, GMP and
# MPFR before a line of its own; parsed once per target, they cost a target one compile of about
# 15 s instead of about 2 s in each of its units (the cold build of `make test` and of the
# sanitizer tier, docs/reliability.md "CI time"). Only headers from outside the project go in,
# so that editing a header of attnprop does not rebuild the precompiled one. A unit that forgets
# an include of its own still compiles here: ATTNPROP_PCH=OFF builds without them. A unit built
# with other code-generation flags (the AVX2 kernels) skips the precompiled header.
option(ATTNPROP_PCH "Precompile the system headers of the larger targets" ON)

set(ATTNPROP_PCH_HEADERS
  <algorithm> <array> <cmath> <cstdint> <cstring> <filesystem> <functional> <iostream>
  <limits> <map> <memory> <optional> <random> <set> <sstream> <stdexcept> <string>
  <string_view> <tuple> <variant> <vector>
  <gmp.h> <mpfr.h> <boost/multiprecision/gmp.hpp>)

# attnprop_precompile(target [extra headers...]): the target's units include ATTNPROP_PCH_HEADERS
# and the extra ones (a test target's Catch2, RapidCheck) from one precompiled header.
function(attnprop_precompile target)
  if(NOT ATTNPROP_PCH)
    return()
  endif()
  target_precompile_headers(${target} PRIVATE ${ATTNPROP_PCH_HEADERS} ${ARGN})
  # g++ 12 reports std::string's own inlined copies (char_traits.h) as out of bounds once they
  # come from a precompiled header: its suppression of warnings in system headers no longer
  # applies there, and these middle-end checks are known to misfire on std::string at -O2
  # (GCC 12). The sanitizer build (clang) keeps the check at run time.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-array-bounds -Wno-stringop-overflow
                                             -Wno-stringop-overread)
  endif()
endfunction()

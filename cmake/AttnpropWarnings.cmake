# Warnings and sanitizers per target; global flags are never edited.
function(attnprop_target_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor)
  # GCC 12 and 13 at -O3 (the Release build of `make bench`) report impossible overlaps in
  # libstdc++'s own inlined std::string concatenation ("accessing 9223372036854775810 or more
  # bytes ... [-Wrestrict]", a known false positive of those compilers) at sites that write
  # "text" + a string; that one check is off for those compilers in that configuration only.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
     AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 14)
    target_compile_options(${target} PRIVATE $<$<CONFIG:Release>:-Wno-restrict>)
  endif()
  # The certified double kind's error bounds count every rounding of the source expressions:
  # no expression may be fused into an FMA behind our back (GCC fuses in GNU modes when the
  # target has FMA instructions, e.g. with -march=native).
  target_compile_options(${target} PRIVATE -ffp-contract=off)
  # Nothing reads errno after a math call, installs floating-point traps or reads the
  # exception flags (the certified kinds round outward explicitly, in the default rounding
  # mode): so sqrt need not set errno and a select of two floating-point values need not be a
  # branch, and loops over rows with both vectorise. Results are the same bits.
  target_compile_options(${target} PRIVATE -fno-math-errno -fno-trapping-math)
  if(ATTNPROP_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(ATTNPROP_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=${ATTNPROP_SANITIZE} -fno-omit-frame-pointer
                                             -fno-sanitize-recover=all)
    target_link_options(${target} PRIVATE -fsanitize=${ATTNPROP_SANITIZE})
  endif()
  if(ATTNPROP_FUZZ)
    # Coverage for libFuzzer in every target; only the fuzz targets link libFuzzer itself.
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link)
    target_link_options(${target} PRIVATE -fsanitize=fuzzer-no-link)
  endif()
endfunction()

// Catch2 main for attnprop's test executables.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

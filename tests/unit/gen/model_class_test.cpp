// The model class of a generated model and RapidCheck's display of a model
// (src/gen/model_class.cpp).
#include "gen/generators.hpp"

#include "model/model_file.hpp"
#include "gen_testing.hpp"

#include <catch2/catch.hpp>
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

using namespace attnprop;
using namespace attnprop::gen_testing;

TEST_CASE("model_class and showValue", "[gen]") {
    const auto m = one(gen::near_tie_hard_model(), 1, 0);
    REQUIRE(gen::model_class(m) == "hard L1 H1 affine");
    const std::string shown = show(m);
    REQUIRE(shown.rfind("hard L1 H1 affine: {\"format\":\"attnprop-model\"", 0) == 0);
    const auto s = one(gen::soft_model(), 1, 0);
    REQUIRE(gen::model_class(s) == "soft L1 H1 relu");
}

// Hard models with a near tie that double arithmetic gets wrong (generators.hpp:
// near_tie_hard_model), for a deliberately false control property.
#include "gen/generators.hpp"

#include "gen/genome.hpp"

#include <rapidcheck.h>

#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace attnprop::gen {
namespace {

using namespace detail;

struct near_tie_spec {
    int alphabet = 2;
    int base = 0;
    int exponent = 19;
    int mantissa = 1;
    int bumped = 1;
    std::vector<int> extras; ///< extra coordinates' token entries, (alphabet + 1) per coordinate
};

exact_model build_near_tie(const near_tie_spec& s) {
    static const std::pair<long, long> bases[] = {{1, 3}, {2, 3}, {1, 7}, {5, 9}, {3, 11}, {7, 13}};
    const rational base(bases[s.base].first, bases[s.base].second);
    rational eps(s.mantissa);
    for (int t = 0; t < s.exponent; ++t) eps /= 10;
    // Make sure base and base + eps round to the same double (the point of the model).
    while (numeric::to_double_nearest(base) != numeric::to_double_nearest(base + eps))
        eps /= 1000;
    const std::size_t extra = s.extras.size() / static_cast<std::size_t>(s.alphabet + 1);
    const std::size_t d = 2 + extra;
    json::value doc = model_header(
        "hard", "generated-hard",
        "random near-tie hard-attention model from attnprop's generator "
        "(gen::near_tie_hard_model): keys " + numeric::to_exact_string(base) + " and " +
            numeric::to_exact_string(base) + " + " + numeric::to_exact_string(eps) +
            " tie in double but not exactly, so double attends to a different position",
        s.alphabet, d);
    json::value tokens = json::value::object();
    for (int k = 0; k <= s.alphabet; ++k) {
        std::vector<rational> v;
        if (k == s.alphabet) {
            v = {base - 1, rational(0)};
        } else if (k == s.bumped) {
            v = {base + eps, rational(1)};
        } else {
            v = {base, rational(0)};
        }
        for (std::size_t e = 0; e < extra; ++e)
            v.emplace_back(zigzag(s.extras[e * static_cast<std::size_t>(s.alphabet + 1) +
                                           static_cast<std::size_t>(k)]));
        tokens.set(k == s.alphabet ? eos_name : symbol_name(k), jvec(v));
    }
    doc.set("token_embedding", std::move(tokens));
    json::value pos = json::value::object();
    pos.set("kind", jstr("formula"));
    pos.set("dim", jint(d));
    pos.set("coordinates", jvec(std::vector<rational>(d)));
    doc.set("positional", std::move(pos));
    doc.set("input", jstr("add"));

    auto unit_row = [&](std::size_t at, std::size_t cols) {
        dense m = zero_matrix(1, cols);
        m.a[at] = 1;
        return m;
    };
    json::value score = json::value::object();
    score.set("kind", jstr("dot"));
    score.set("Q", zero_matrix(1, d).to_json());
    score.set("q_bias", jvec({rational(1)}));
    score.set("K", unit_row(0, d).to_json());
    json::value value = json::value::object();
    value.set("kind", jstr("linear"));
    value.set("V", unit_row(1, d).to_json());
    json::value head = json::value::object();
    head.set("score", std::move(score));
    head.set("value", std::move(value));
    json::value heads = json::value::array();
    heads.push_back(std::move(head));
    // y' = (y_0, b, y_2, ...): the head's output replaces coordinate 1.
    dense w = zero_matrix(d, d + 1);
    for (std::size_t r = 0; r < d; ++r) w.a[r * (d + 1) + (r == 1 ? d : r)] = 1;
    json::value update = json::value::object();
    update.set("kind", jstr("affine"));
    update.set("W", w.to_json());
    json::value layer = json::value::object();
    layer.set("heads", std::move(heads));
    layer.set("update", std::move(update));
    json::value layers = json::value::array();
    layers.push_back(std::move(layer));
    doc.set("layers", std::move(layers));
    json::value readout = json::value::object();
    readout.set("kind", jstr("threshold"));
    std::vector<rational> wv(d);
    wv[1] = 1;
    readout.set("w", jvec(wv));
    readout.set("t", jstr("1/2"));
    doc.set("readout", std::move(readout));
    return parse_doc(doc);
}

} // namespace

rc::Gen<model::model<numeric::rational>> near_tie_hard_model() {
    return rc::gen::mapcat(
        rc::gen::tuple(rc::gen::inRange(2, 4), rc::gen::inRange(0, 6), rc::gen::inRange(19, 23),
                       rc::gen::inRange(1, 10), rc::gen::inRange(0, 3), rc::gen::inRange(0, 3)),
        [](std::tuple<int, int, int, int, int, int> t) {
            near_tie_spec s;
            s.alphabet = std::get<0>(t);
            s.base = std::get<1>(t);
            s.exponent = std::get<2>(t);
            s.mantissa = std::get<3>(t);
            s.bumped = 1 + std::get<4>(t) % (s.alphabet - 1);
            const auto extra = static_cast<std::size_t>(std::get<5>(t));
            return rc::gen::map(
                rc::gen::container<std::vector<int>>(
                    extra * static_cast<std::size_t>(s.alphabet + 1), rc::gen::inRange(0, 5)),
                [s](std::vector<int> extras) {
                    near_tie_spec full = s;
                    full.extras = std::move(extras);
                    return build_near_tie(full);
                });
        });
}

} // namespace attnprop::gen

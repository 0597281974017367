// Hard models with controlled layer-1 score margins and an inverse temperature in every head
// (margins.hpp), and the negative-control models of the suite soft-hard.
#include "gen/margins.hpp"

#include "model/model_file.hpp"

#include <rapidcheck.h>

#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace attnprop::gen {

const char* to_string(margin_family f) {
    switch (f) {
    case margin_family::exact_gap: return "exact-gap";
    case margin_family::shrinking_gap: return "shrinking-gap";
    case margin_family::exact_ties: return "exact-ties";
    }
    return "?";
}

namespace {

/// The structural choices of one margin model (each shrinks towards its first value).
struct margin_spec {
    margin_family family = margin_family::exact_gap;
    int alphabet = 2, dt = 1, layers = 1, heads = 1, dk = 1, dv = 1;
    int sigma = 0;       ///< scale σ: 1, 1/2, 2
    int tie_break = 0;   ///< shrinking_gap: c = 1/2, 1/4
    int beta_family = 0; ///< constant, c ln n, n ln n
    int beta_level = 0;  ///< c in {1, 4, 16}
    std::vector<int> genes;
};

/// Reads genes in order; 0 once they run out. A gene g in [0, 5) is the integer 0, 1, -1, 2, -2.
class gene_reader {
public:
    explicit gene_reader(const std::vector<int>& g) : g_(g) {}
    int integer() {
        const int g = at_ < g_.size() ? g_[at_] : 0;
        ++at_;
        static const int zigzag[] = {0, 1, -1, 2, -2};
        return zigzag[g % 5];
    }
    /// An integer in [-1, 1].
    int small() {
        const int v = integer();
        return v > 1 ? 1 : (v < -1 ? -1 : v);
    }

private:
    const std::vector<int>& g_;
    std::size_t at_ = 0;
};

std::string matrix(const std::vector<std::vector<std::string>>& rows) {
    std::string s = "[";
    for (std::size_t r = 0; r < rows.size(); ++r) {
        s += r ? ", [" : "[";
        for (std::size_t c = 0; c < rows[r].size(); ++c) s += (c ? ", " : "") + rows[r][c];
        s += "]";
    }
    return s + "]";
}

std::string beta_text(const margin_spec& s) {
    static const char* levels[] = {"1", "4", "16"};
    switch (s.beta_family) {
    case 0: return levels[s.beta_level];
    case 1: return std::string(levels[s.beta_level]) + "*log(n)";
    default: return "n*log(n)";
    }
}

model::model<numeric::rational> build(const margin_spec& s) {
    gene_reader g(s.genes);
    const int d = s.dt + 2; // token coordinates, then 1, then i/n
    const int cst = s.dt, pos = s.dt + 1;
    static const char* sigmas[] = {"1", "\"1/2\"", "2"};
    static const char* tie_breaks[] = {"\"1/2\"", "\"1/4\""};
    std::ostringstream os;
    os << R"({"format": "attnprop-model", "version": 1, "name": "margin-)" << to_string(s.family)
       << R"(", "description": "A random hard model with controlled layer-1 margins (attnprop's generator).",)"
       << R"( "attention": ")" << (s.family == margin_family::exact_ties ? "average-hard" : "hard")
       << R"(", "alphabet": [)";
    for (int a = 0; a < s.alphabet; ++a) os << (a ? ", " : "") << '"' << a << '"';
    os << R"(], "eos": "$", "d": )" << d << R"(, "token_embedding": {)";
    for (int a = 0; a <= s.alphabet; ++a) {
        os << (a ? ", " : "") << '"' << (a == s.alphabet ? std::string("$") : std::to_string(a))
           << "\": [";
        for (int c = 0; c < s.dt; ++c) os << (c ? ", " : "") << g.integer();
        os << "]";
    }
    os << R"(}, "positional": {"kind": "formula", "dim": 2, "coordinates": [1, "i/n"]},)"
       << R"( "input": "concat", "layers": [)";
    for (int k = 0; k < s.layers; ++k) {
        os << (k ? ", " : "") << R"({"heads": [)";
        for (int h = 0; h < s.heads; ++h) {
            std::vector<std::vector<std::string>> Q, K, V;
            for (int r = 0; r < s.dk; ++r) {
                std::vector<std::string> q(static_cast<std::size_t>(d), "0"), kk(static_cast<std::size_t>(d), "0");
                for (int c = 0; c <= cst; ++c) q[static_cast<std::size_t>(c)] = std::to_string(g.integer());
                for (int c = 0; c <= cst; ++c) kk[static_cast<std::size_t>(c)] = std::to_string(g.integer());
                Q.push_back(std::move(q));
                K.push_back(std::move(kk));
            }
            if (s.family == margin_family::shrinking_gap) {
                // −c (j / n): the query's constant times minus the key's position.
                std::vector<std::string> q(static_cast<std::size_t>(d), "0"), kk(static_cast<std::size_t>(d), "0");
                q[static_cast<std::size_t>(cst)] = tie_breaks[s.tie_break];
                kk[static_cast<std::size_t>(pos)] = "-1";
                Q.push_back(std::move(q));
                K.push_back(std::move(kk));
            }
            for (int r = 0; r < s.dv; ++r) {
                std::vector<std::string> v(static_cast<std::size_t>(d), "0");
                for (int c = 0; c <= cst; ++c) v[static_cast<std::size_t>(c)] = std::to_string(g.integer());
                V.push_back(std::move(v));
            }
            os << (h ? ", " : "") << R"({"score": {"kind": "dot", "Q": )" << matrix(Q)
               << R"(, "K": )" << matrix(K) << R"(, "scale": )" << sigmas[s.sigma]
               << R"(, "beta": ")" << beta_text(s) << R"("}, "value": {"kind": "linear", "V": )"
               << matrix(V) << "}}";
        }
        // y + W b, writing only the token coordinates.
        const int width = d + s.heads * s.dv;
        std::vector<std::vector<std::string>> W;
        for (int r = 0; r < d; ++r) {
            std::vector<std::string> row(static_cast<std::size_t>(width), "0");
            row[static_cast<std::size_t>(r)] = "1";
            if (r < s.dt)
                for (int c = d; c < width; ++c) row[static_cast<std::size_t>(c)] = std::to_string(g.small());
            W.push_back(std::move(row));
        }
        os << R"(], "update": {"kind": "affine", "W": )" << matrix(W) << "}}";
    }
    os << R"(], "readout": {"kind": "threshold", "w": [)";
    for (int c = 0; c < d; ++c) os << (c ? ", " : "") << (c < s.dt ? g.integer() : 0);
    // A half-integer threshold: integer states never sit on it.
    os << R"(], "t": ")" << 2 * g.integer() + 1 << R"(/2"}})";
    return model::parse_model(os.str(), "<generated>");
}

rc::Gen<margin_spec> spec_gen(margin_family f) {
    return rc::gen::mapcat(
        rc::gen::tuple(rc::gen::inRange(2, 4), rc::gen::inRange(1, 3), rc::gen::inRange(1, 3),
                       rc::gen::inRange(1, 3), rc::gen::inRange(1, 3), rc::gen::inRange(1, 3),
                       rc::gen::inRange(0, 3), rc::gen::inRange(0, 2), rc::gen::inRange(0, 3),
                       rc::gen::inRange(0, 3)),
        [f](const std::tuple<int, int, int, int, int, int, int, int, int, int>& t) {
            margin_spec s;
            s.family = f;
            std::tie(s.alphabet, s.dt, s.layers, s.heads, s.dk, s.dv, s.sigma, s.tie_break,
                     s.beta_family, s.beta_level) = t;
            // Enough genes for the largest structure; unread genes do not matter.
            return rc::gen::map(rc::gen::container<std::vector<int>>(160, rc::gen::inRange(0, 5)),
                                [s](std::vector<int> genes) {
                                    margin_spec out = s;
                                    out.genes = std::move(genes);
                                    return out;
                                });
        });
}

/// The one-layer binary control: y^(0) = (x_j = 1, 1, i/n), one dot head.
model::model<numeric::rational> control(const std::string& name, const std::string& Q,
                                        const std::string& K, const std::string& scale,
                                        const std::string& beta, const std::string& V) {
    const std::string text =
        R"({"format": "attnprop-model", "version": 1, "name": ")" + name +
        R"(", "description": "A negative-control model of the suite soft-hard (attnprop's generator).",)"
        R"( "attention": "hard", "alphabet": ["0", "1"], "eos": "$", "d": 3,)"
        R"( "token_embedding": {"0": [0], "1": [1], "$": [0]},)"
        R"( "positional": {"kind": "formula", "dim": 2, "coordinates": [1, "i/n"]}, "input": "concat",)"
        R"( "layers": [{"heads": [{"score": {"kind": "dot", "Q": )" + Q + R"(, "K": )" + K +
        R"(, "scale": )" + scale + R"(, "beta": )" + beta +
        R"(}, "value": {"kind": "linear", "V": )" + V + R"(}}],)"
        R"( "update": {"kind": "affine", "W": [[0, 0, 0, 1], [0, 1, 0, 0], [0, 0, 1, 0]]}}],)"
        R"( "readout": {"kind": "threshold", "w": [1, 0, 0], "t": "1/2"}})";
    return model::parse_model(text, "<generated>");
}

} // namespace

rc::Gen<model::model<numeric::rational>> margin_model(margin_family f) {
    return rc::gen::map(spec_gen(f), [](const margin_spec& s) { return build(s); });
}

rc::Gen<model::model<numeric::rational>> margin_model() {
    return rc::gen::oneOf(margin_model(margin_family::exact_gap),
                          margin_model(margin_family::shrinking_gap),
                          margin_model(margin_family::exact_ties));
}

rc::Gen<model::model<numeric::rational>> control_model(control_family f) {
    switch (f) {
    case control_family::two_level:
        return rc::gen::map(rc::gen::inRange(0, 4), [](int k) {
            static const char* gammas[] = {"1", "\"1/2\"", "\"3/2\"", "2"};
            static const char* plain[] = {"1", "(1/2)", "(3/2)", "2"};
            return control("control-two-level", "[[0, 1, 0]]", "[[1, 0, 0]]", gammas[k],
                           std::string("\"log(n)/") + plain[k] + "\"", "[[1, 0, 0]]");
        });
    case control_family::constant_beta:
        return rc::gen::map(rc::gen::tuple(rc::gen::inRange(0, 3), rc::gen::inRange(0, 3)),
                            [](const std::tuple<int, int>& t) {
                                static const char* gammas[] = {"1", "\"1/2\"", "2"};
                                static const char* plain[] = {"1", "(1/2)", "2"};
                                static const char* bg[] = {"1", "(3/2)", "2"};
                                return control("control-constant-beta", "[[0, 1, 0]]",
                                               "[[1, 0, 0]]", gammas[std::get<0>(t)],
                                               std::string("\"") + bg[std::get<1>(t)] + "/" +
                                                   plain[std::get<0>(t)] + "\"",
                                               "[[1, 0, 0]]");
                            });
    case control_family::positional_gap:
        return rc::gen::map(rc::gen::inRange(0, 2), [](int k) {
            return control("control-positional-gap", "[[0, 1, 0]]", "[[0, 0, -1]]", "1",
                           k == 0 ? "\"n\"" : "\"n/2\"", "[[0, 0, 1]]");
        });
    }
    throw std::logic_error("control_model: unknown family");
}

} // namespace attnprop::gen

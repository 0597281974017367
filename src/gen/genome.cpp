// What the model generators share (genome.hpp): JSON of exact numbers, dense matrices, the
// positional coordinates and the header of a generated model file.
#include "gen/genome.hpp"

#include "model/model_file.hpp"

#include <algorithm>
#include <cmath>

namespace attnprop::gen::detail {

json::value jnum(const rational& q) {
    std::string s = numeric::to_exact_string(q);
    if (s.find('/') == std::string::npos) return json::value::number_raw(std::move(s));
    return json::value::string(std::move(s));
}
json::value jint(std::size_t v) { return json::value::number(static_cast<long long>(v)); }
json::value jstr(std::string s) { return json::value::string(std::move(s)); }

json::value jvec(const std::vector<rational>& v) {
    json::value a = json::value::array();
    for (const auto& q : v) a.push_back(jnum(q));
    return a;
}

json::value jnames(const std::vector<std::string>& names) {
    if (names.size() == 1) return jstr(names.front());
    json::value a = json::value::array();
    for (const auto& s : names) a.push_back(jstr(s));
    return a;
}

double magnitude(const rational& q) { return std::fabs(numeric::to_double_nearest(q)); }

double max_abs(const std::vector<rational>& v) {
    double m = 0;
    for (const auto& q : v) m = std::max(m, magnitude(q));
    return m;
}

json::value dense::to_json() const {
    json::value m = json::value::array();
    for (std::size_t r = 0; r < rows; ++r) {
        json::value row = json::value::array();
        for (std::size_t c = 0; c < cols; ++c) row.push_back(jnum(a[r * cols + c]));
        m.push_back(std::move(row));
    }
    return m;
}

double dense::row_norm() const {
    double m = 0;
    for (std::size_t r = 0; r < rows; ++r) {
        double s = 0;
        for (std::size_t c = 0; c < cols; ++c) s += magnitude(a[r * cols + c]);
        m = std::max(m, s);
    }
    return m;
}

dense zero_matrix(std::size_t rows, std::size_t cols) {
    return {rows, cols, std::vector<rational>(rows * cols)};
}

void split_dims(input_choice in, std::size_t d, int split, int pdim_code, int max_dim,
                std::size_t& dtok, std::size_t& pdim) {
    switch (in) {
    case input_choice::add: dtok = pdim = d; break;
    case input_choice::concat:
        dtok = 1 + static_cast<std::size_t>(split) % (d - 1);
        pdim = d - dtok;
        break;
    case input_choice::map:
        dtok = 1 + static_cast<std::size_t>(split) % static_cast<std::size_t>(max_dim);
        pdim = static_cast<std::size_t>(pdim_code);
        break;
    }
}

std::string symbol_name(int k) {
    static const std::string chars = "0123456789abcdefghijklmnopqrstuvwxyz";
    return std::string(1, chars[static_cast<std::size_t>(k)]);
}

std::pair<std::string, double> atom_text(int atom, const std::vector<std::string>& table) {
    const std::string& t = table[static_cast<std::size_t>(atom)];
    const double bound = (t == "i" || t == "n - i") ? 4096.0 : 1.0;
    return {t, bound};
}

std::string paren(const rational& q) { return "(" + numeric::to_exact_string(q) + ")"; }

json::value coordinate(const std::string& atom, const rational& c1, const rational& c0) {
    if (atom == "1") return jnum(c1 + c0);
    if (c1 == 0) return jnum(c0);
    std::string text = (c1 == 1 ? std::string() : paren(c1) + "*") + "(" + atom + ")";
    if (c0 != 0) text += " + " + paren(c0);
    return jstr(std::move(text));
}

json::value model_header(const std::string& attention, const std::string& name,
                         const std::string& description, int alphabet, std::size_t d) {
    json::value doc = json::value::object();
    doc.set("format", jstr("attnprop-model"));
    doc.set("version", jint(1));
    doc.set("name", jstr(name));
    doc.set("description", jstr(description));
    doc.set("source", jstr("attnprop generator"));
    doc.set("attention", jstr(attention));
    json::value sigma = json::value::array();
    for (int k = 0; k < alphabet; ++k) sigma.push_back(jstr(symbol_name(k)));
    doc.set("alphabet", std::move(sigma));
    doc.set("eos", jstr(eos_name));
    doc.set("d", jint(d));
    return doc;
}

exact_model parse_doc(const json::value& doc) {
    return model::parse_model(json::dump(doc, -1), "<generated>");
}

} // namespace attnprop::gen::detail

#pragma once
/// @file genome.hpp
/// What the model generators of gen/ share (not part of the public API; generators.hpp has the
/// design): the genome coefficients are read from, the JSON a model file is built as, the
/// positional coordinates and the header of a generated model file.

#include "model/json.hpp"
#include "model/model.hpp"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace attnprop::gen::detail {

using model::vec;
using numeric::rational;
using exact_model = model::model<rational>;

// --- Genome: coefficients from small integers that shrink towards 0 -------------------------

/// Genes are in [0, gene_values).
constexpr int gene_values = 9;

/// 0, 1, -1, 2, -2, ... for g = 0, 1, 2, 3, 4, ...: shrinking g towards 0 shrinks |value|.
inline long zigzag(int g) { return g % 2 == 1 ? (g + 1) / 2 : -(g / 2); }

/// Reads coefficients from a genome, in order; a genome that runs out reads genes 0. Counts
/// what it read, so a dry run over an empty genome gives the genome length a spec needs.
class genome_reader {
public:
    explicit genome_reader(const std::vector<int>& genes) : genes_(&genes) {}

    std::size_t consumed() const { return pos_; }

    int gene() {
        const int g = pos_ < genes_->size() ? (*genes_)[pos_] : 0;
        ++pos_;
        return g;
    }
    /// An integer in [-max_abs, max_abs] (one gene), 0 for gene 0.
    long integer(int max_abs) { return zigzag(gene() % (2 * max_abs + 1)); }
    /// p / q with |p| <= max_abs, 1 <= q <= max_den (two genes), 0/1 for genes 0.
    rational fraction(int max_abs, int max_den) {
        const long p = integer(max_abs);
        const long q = 1 + gene() % max_den;
        return rational(p, q);
    }
    /// p / q with 1 <= p <= max_num, 1 <= q <= max_den (two genes), 1 for genes 0.
    rational positive(int max_num, int max_den) {
        const long p = 1 + gene() % max_num;
        const long q = 1 + gene() % max_den;
        return rational(p, q);
    }

private:
    const std::vector<int>* genes_;
    std::size_t pos_ = 0;
};

// --- JSON of a model file -------------------------------------------------------------------

/// An exact number: a JSON integer, or a string "p/q".
json::value jnum(const rational& q);
json::value jint(std::size_t v);
json::value jstr(std::string s);
/// An array of exact numbers.
json::value jvec(const std::vector<rational>& v);
/// One name as a string, several as an array (a graph node's "in").
json::value jnames(const std::vector<std::string>& names);

/// |q| rounded to the nearest double (the builders' magnitude bounds).
double magnitude(const rational& q);
/// max |v_t| (0 for an empty v).
double max_abs(const std::vector<rational>& v);

/// A dense exact matrix being built.
struct dense {
    std::size_t rows = 0;
    std::size_t cols = 0;
    std::vector<rational> a; ///< row-major

    json::value to_json() const;
    /// max_r sum_c |a_rc|: |W x|_inf <= row_norm() |x|_inf.
    double row_norm() const;
};

dense zero_matrix(std::size_t rows, std::size_t cols);

// --- Structure shared by the hard and soft specs --------------------------------------------

/// Structural codes of tables and graphs are in [0, code_values).
constexpr int code_values = 64;

enum class input_choice { add, concat, map };

/// Token dimension and positional dimension for an input choice.
void split_dims(input_choice in, std::size_t d, int split, int pdim_code, int max_dim,
                std::size_t& dtok, std::size_t& pdim);

// --- Pieces of every generated model file ---------------------------------------------------

/// The k-th symbol name: 0-9, then a-z (k < 36).
std::string symbol_name(int k);

/// The end-of-sequence symbol of every generated model.
inline constexpr const char* eos_name = "$";

/// Positional atom text (entry `atom` of `table`) and a bound on |atom| for n <= 4096.
std::pair<std::string, double> atom_text(int atom, const std::vector<std::string>& table);

/// "(q)" with q exact.
std::string paren(const rational& q);

/// c1 * atom + c0 as a formula coordinate (a number when constant).
json::value coordinate(const std::string& atom, const rational& c1, const rational& c0);

/// The fields of a generated model file before its embeddings and layers.
json::value model_header(const std::string& attention, const std::string& name,
                         const std::string& description, int alphabet, std::size_t d);

/// The model of a generated document (valid by construction).
exact_model parse_doc(const json::value& doc);

} // namespace attnprop::gen::detail

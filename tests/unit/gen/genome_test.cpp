// What the model generators share (src/gen/genome.cpp): coefficients read from genes shrink
// towards 0 and 1, a genome that runs out reads 0, exact numbers stay exact in the JSON, the
// row norm bounds a matrix, the input dimensions split as the spec says, and the positional
// coordinates and header make a model file that parses.
#include "gen/genome.hpp"

#include "model/model_file.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace attnprop;
using namespace attnprop::gen::detail;

TEST_CASE("genes: zigzag integers, fractions and a genome that runs out", "[gen]") {
    CHECK(zigzag(0) == 0);
    CHECK(zigzag(1) == 1);
    CHECK(zigzag(2) == -1);
    CHECK(zigzag(3) == 2);
    CHECK(zigzag(4) == -2);
    const std::vector<int> genes = {3, 4, 0, 0, 8, 2, 5, 1};
    genome_reader g(genes);
    CHECK(g.integer(2) == 2);                      // gene 3
    CHECK(g.integer(1) == 1);                      // gene 4 mod 3 = 1
    CHECK(g.fraction(4, 4) == rational(0));        // genes 0, 0: 0/1
    CHECK(g.fraction(4, 4) == rational(-4, 3));    // genes 8 (-4), 2 (den 3)
    CHECK(g.positive(4, 4) == rational(2, 2));     // genes 5 (num 2), 1 (den 2)
    CHECK(g.consumed() == 8);
    CHECK(g.gene() == 0); // run out: 0, and still counted
    CHECK(g.fraction(3, 5) == rational(0));
    CHECK(g.positive(3, 5) == rational(1));
    CHECK(g.consumed() == 13);
    // A dry run over an empty genome counts what a spec needs.
    const std::vector<int> none;
    genome_reader dry(none);
    for (int k = 0; k < 5; ++k) (void)dry.fraction(4, 4);
    CHECK(dry.consumed() == 10);
}

TEST_CASE("JSON of exact numbers and dense matrices", "[gen]") {
    CHECK(json::dump(jnum(rational(3)), -1) == "3");
    CHECK(json::dump(jnum(rational(-2, 6)), -1) == "\"-1/3\"");
    CHECK(json::dump(jvec({rational(1, 2), rational(0)}), -1) == "[\"1/2\",0]");
    CHECK(json::dump(jnames({"a"}), -1) == "\"a\"");
    CHECK(json::dump(jnames({"a", "b"}), -1) == "[\"a\",\"b\"]");
    dense w{2, 2, {rational(1), rational(-3, 2), rational(1, 4), rational(0)}};
    CHECK(w.row_norm() == 2.5);
    CHECK(json::dump(w.to_json(), -1) == "[[1,\"-3/2\"],[\"1/4\",0]]");
    CHECK(zero_matrix(1, 3).row_norm() == 0);
    CHECK(max_abs({rational(-7, 2), rational(3)}) == 3.5);
    CHECK(max_abs({}) == 0);
}

TEST_CASE("input dimensions: add, concat and a map split d as the spec says", "[gen]") {
    std::size_t dtok = 0, pdim = 0;
    split_dims(input_choice::add, 3, 5, 2, 4, dtok, pdim);
    CHECK((dtok == 3 && pdim == 3));
    split_dims(input_choice::concat, 3, 5, 2, 4, dtok, pdim);
    CHECK(dtok == 1 + 5 % 2);
    CHECK(dtok + pdim == 3);
    split_dims(input_choice::map, 3, 5, 2, 4, dtok, pdim);
    CHECK(dtok == 1 + 5 % 4);
    CHECK(pdim == 2);
}

TEST_CASE("coordinates and the header make a model file that parses", "[gen]") {
    CHECK(json::dump(coordinate("1", rational(2), rational(1, 2)), -1) == "\"5/2\"");
    CHECK(json::dump(coordinate("i/n", rational(0), rational(3)), -1) == "3");
    CHECK(json::dump(coordinate("i/n", rational(1), rational(0)), -1) == "\"(i/n)\"");
    CHECK(json::dump(coordinate("i", rational(-1, 2), rational(1)), -1) == "\"(-1/2)*(i) + (1)\"");
    CHECK(symbol_name(0) == "0");
    CHECK(symbol_name(10) == "a");
    CHECK(atom_text(1, {"1", "i"}).second == 4096.0);
    CHECK(atom_text(0, {"1", "i"}).second == 1.0);
    json::value doc = model_header("hard", "generated-hard", "a test", 2, 1);
    json::value tokens = json::value::object();
    tokens.set("0", jvec({rational(0)}));
    tokens.set("1", jvec({rational(1)}));
    tokens.set(eos_name, jvec({rational(1, 2)}));
    doc.set("token_embedding", std::move(tokens));
    json::value pos = json::value::object();
    pos.set("kind", jstr("formula"));
    pos.set("dim", jint(1));
    json::value coords = json::value::array();
    coords.push_back(coordinate("i/n", rational(1), rational(0)));
    pos.set("coordinates", std::move(coords));
    doc.set("positional", std::move(pos));
    doc.set("input", jstr("add"));
    json::value layer = json::value::object();
    json::value head = json::value::object();
    json::value score = json::value::object();
    score.set("kind", jstr("dot"));
    score.set("Q", dense{1, 1, {rational(1)}}.to_json());
    score.set("K", dense{1, 1, {rational(1)}}.to_json());
    head.set("score", std::move(score));
    json::value value = json::value::object();
    value.set("kind", jstr("linear"));
    value.set("V", dense{1, 1, {rational(1)}}.to_json());
    head.set("value", std::move(value));
    json::value heads = json::value::array();
    heads.push_back(std::move(head));
    layer.set("heads", std::move(heads));
    json::value update = json::value::object();
    update.set("kind", jstr("affine"));
    update.set("W", dense{1, 2, {rational(0), rational(1)}}.to_json());
    layer.set("update", std::move(update));
    json::value layers = json::value::array();
    layers.push_back(std::move(layer));
    doc.set("layers", std::move(layers));
    json::value readout = json::value::object();
    readout.set("kind", jstr("threshold"));
    readout.set("w", jvec({rational(1)}));
    readout.set("t", jnum(rational(1, 3)));
    doc.set("readout", std::move(readout));
    const exact_model m = parse_doc(doc);
    CHECK(m.name == "generated-hard");
    CHECK(m.source == "attnprop generator");
    CHECK(m.sigma.symbols == std::vector<std::string>{"0", "1"});
    CHECK(m.d == 1);
}

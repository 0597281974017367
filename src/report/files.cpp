#include "report/files.hpp"

#include "model/model_file.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

namespace attnprop::report {

namespace fs = std::filesystem;
using json::value;

void write_file_atomic(const fs::path& p, const std::string& text) {
    const fs::path tmp = p.string() + ".tmp" + std::to_string(::getpid());
    {
        std::ofstream f(tmp, std::ios::binary);
        if (!f) throw std::runtime_error("cannot write " + p.string());
        f << text;
        f.flush();
        if (!f) throw std::runtime_error("cannot write " + p.string());
    }
    std::error_code ec;
    fs::rename(tmp, p, ec);
    if (ec) {
        fs::remove(tmp, ec);
        throw std::runtime_error("cannot write " + p.string());
    }
}

fs::path write_case_folder(const fs::path& dir, const model::model<numeric::rational>& m,
                           const case_folder& c) {
    fs::create_directories(dir);
    model::write_model_file(m, (dir / "model.json").string());
    value o = value::object();
    o.set("format", value::string("attnprop-counterexample"));
    o.set("version", value::number(1));
    o.set("property", value::string(c.property));
    o.set("statement", value::string(c.statement));
    o.set("model", value::string("model.json"));
    value ins = value::array(), ns = value::array();
    for (const auto& s : c.inputs) {
        ins.push_back(value::string(s));
        ns.push_back(value::number(static_cast<long long>(s.size()) + 1));
    }
    o.set("inputs", std::move(ins));
    o.set("n", std::move(ns));
    value params = value::object();
    for (const auto& [k, v] : c.params) params.set(k, value::number(v));
    o.set("params", std::move(params));
    o.set("seed", value::string(std::to_string(c.seed)));
    o.set("base_seed", value::string(std::to_string(c.seed)));
    o.set("reproduce", value::string(""));
    value kinds = value::array();
    for (const auto& k : c.scalar_kinds) kinds.push_back(value::string(k));
    o.set("scalar_kinds", std::move(kinds));
    o.set("precision", value::number(c.precision));
    o.set("precision_cap", value::number(c.precision));
    o.set("verdict", value::string("violated"));
    o.set("message", value::string(c.message));
    o.set("numbers", c.numbers);
    if (!c.made_by.empty()) o.set("provenance", provenance_to_json(c.made_by));
    write_file_atomic(dir / "case.json", json::dump(o, 2) + "\n");
    return dir;
}

} // namespace attnprop::report

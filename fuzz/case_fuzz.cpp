// libFuzzer target: the counterexample reader that `attnprop replay` uses
// (report::read_counterexample, which reads DIR/case.json and the model it names). The input
// is written as case.json into a scratch folder that also holds a valid model.json. Reading
// either succeeds or throws an exception; what is checked is memory safety and undefined
// behaviour (ASan, UBSan), not the messages: the reader's own validation is tested elsewhere.
#include "numeric/allocation.hpp"
#include "report/check_report.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

std::filesystem::path scratch;

const char* const model_text = R"({
  "format": "attnprop-model", "version": 1, "name": "fuzz", "attention": "hard",
  "alphabet": ["0", "1"], "eos": "$", "d": 1,
  "token_embedding": {"0": [0], "1": [1], "$": [0]},
  "positional": {"kind": "formula", "dim": 1, "coordinates": [0]}, "input": "add",
  "layers": [{"heads": [{"score": {"kind": "dot", "Q": [[0]], "K": [[1]]},
                         "value": {"kind": "linear", "V": [[1]]}}],
              "update": {"kind": "affine", "W": [[0, 1]]}}],
  "readout": {"kind": "threshold", "w": [1], "t": "1/2"}
})";

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    attnprop::numeric::install_allocation_guard();
    std::string templ = (std::filesystem::temp_directory_path() / "attnprop-case-fuzz-XXXXXX").string();
    if (!mkdtemp(templ.data())) std::abort();
    scratch = templ;
    std::ofstream(scratch / "model.json") << model_text;
    std::atexit([] {
        std::error_code ec;
        std::filesystem::remove_all(scratch, ec);
    });
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    {
        std::ofstream f(scratch / "case.json", std::ios::binary | std::ios::trunc);
        f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    }
    try {
        (void)attnprop::report::read_counterexample(scratch);
    } catch (const std::exception&) {
    }
    return 0;
}

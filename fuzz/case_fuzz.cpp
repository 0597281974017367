// libFuzzer target: what `attnprop replay` reads before it runs a case
// (runner::read_counterexample, which reads DIR/case.json and the model it names, then the
// property's lookup and runner::check_case). The input is written as case.json into a scratch
// folder that also holds a valid model.json. Besides memory safety and undefined behaviour
// (ASan, UBSan), the oracle is replay's promise that a folder it cannot read or run is exit 2
// with a located message: only the errors the command line reports with exit 2 (a located file
// error, a limit, a numeric or input error, an allocation failure) may escape; any other
// exception (std::out_of_range, std::invalid_argument, ...) would be an "internal error" (exit
// 3) and aborts.
#include "model/model.hpp"
#include "numeric/allocation.hpp"
#include "numeric/context.hpp"
#include "numeric/limits.hpp"
#include "runner/property.hpp"
#include "runner/replay.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <new>
#include <string>

namespace {

std::filesystem::path scratch;
attnprop::runner::registry* properties = nullptr;

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
    properties = new attnprop::runner::registry; // lives as long as the process
    attnprop::runner::register_all(*properties);
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
    using namespace attnprop;
    try {
        const runner::replay_record rec = runner::read_counterexample(scratch);
        if (const runner::property* p = properties->find(rec.folder.record.property))
            runner::check_case(*p, rec);
    } catch (const model::model_file_error&) { // and report::case_file_error
    } catch (const numeric::limit_error&) {
    } catch (const numeric::numeric_error&) {
    } catch (const model::input_error&) {
    } catch (const std::bad_alloc&) {
    } catch (const std::exception& e) {
        std::fprintf(stderr, "replay would exit 3 (internal error): %s\n", e.what());
        std::abort();
    }
    return 0;
}

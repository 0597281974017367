// libFuzzer target: the model-file reader (model/model_file.hpp). Any text either reads or
// throws model_file_error (which also reports the resource limits of a model file); a model
// that reads writes a canonical text that reads back to a model writing the same text.
#include "model/model_file.hpp"
#include "numeric/allocation.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    attnprop::numeric::install_allocation_guard();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace attnprop;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    model::model<numeric::rational> m;
    try {
        m = model::parse_model(text, "fuzz.json");
    } catch (const model::model_file_error&) {
        return 0;
    }
    (void)model::exact_blockers(m);
    const std::string written = model::write_model(m);
    const model::model<numeric::rational> back = model::parse_model(written, "written.json");
    if (model::write_model(back) != written) std::abort();
    return 0;
}

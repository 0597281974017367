// libFuzzer target: the JSON reader (model/json.hpp). Any text either parses or throws
// json::parse_error; a parsed value dumps to text that parses to an equal value (compact and
// pretty), and dumping that again gives the same text.
#include "model/json.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace attnprop;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    json::value v;
    try {
        v = json::parse(text);
    } catch (const json::parse_error&) {
        return 0;
    }
    for (int indent : {-1, 2}) {
        const std::string once = json::dump(v, indent);
        const json::value back = json::parse(once); // must not throw
        if (!(back == v)) std::abort();
        if (json::dump(back, indent) != once) std::abort();
    }
    return 0;
}

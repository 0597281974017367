// svg_check FILE.svg...: the geometry of figures attnprop wrote (svg_geometry.hpp): no number
// is NaN or infinite, every text inside the canvas, no two texts overlapping. Prints every
// problem with the file and the texts; exits 1 when there is one, 2 on a file it cannot read or
// parse.
// svg_check --width SIZE TEXT: prints report::text_width(TEXT, SIZE) (for text_widths.py, which
// compares it with what the renderer draws).
#include "svg_geometry.hpp"

#include <fstream>
#include <iostream>
#include <sstream>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << "usage: svg_check FILE.svg...\n";
        return 2;
    }
    if (std::string(argv[1]) == "--width") {
        if (argc != 4) {
            std::cerr << "usage: svg_check --width SIZE TEXT\n";
            return 2;
        }
        std::printf("%.3f\n", attnprop::report::text_width(argv[3], std::strtod(argv[2], nullptr)));
        return 0;
    }
    int worst = 0;
    for (int i = 1; i < argc; ++i) {
        const std::string file = argv[i];
        std::ifstream in(file, std::ios::binary);
        if (!in) {
            std::cerr << file << ": cannot read\n";
            worst = 2;
            continue;
        }
        std::stringstream ss;
        ss << in.rdbuf();
        try {
            std::size_t texts = 0;
            const auto problems = attnprop::test::svg_problems(ss.str(), &texts);
            for (const auto& p : problems) std::cout << file << ": " << p << "\n";
            std::cout << file << ": " << texts << " texts, " << problems.size() << " problem"
                      << (problems.size() == 1 ? "" : "s") << "\n";
            if (!problems.empty()) worst = std::max(worst, 1);
        } catch (const std::exception& e) {
            std::cerr << file << ": " << e.what() << "\n";
            worst = 2;
        }
    }
    return worst;
}

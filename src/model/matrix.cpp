#include "model/matrix.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace attnprop::model {

matrix<rational> make_matrix(std::size_t rows, std::size_t cols, std::vector<rational> data) {
    if (data.size() != rows * cols)
        throw std::invalid_argument("make_matrix: " + std::to_string(data.size()) +
                                    " entries for a " + std::to_string(rows) + " x " +
                                    std::to_string(cols) + " matrix");
    matrix<rational> m;
    m.rows = rows;
    m.cols = cols;
    m.data = std::move(data);
    m.nonzero.resize(rows);
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c)
            if (m.data[r * cols + c] != 0) m.nonzero[r].push_back(c);
    return m;
}

} // namespace attnprop::model

// A table of text cells printed in aligned columns, as the commands' terminal reports show them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iomanip>
#include <ostream>
#include <string>
#include <vector>

namespace attnprop::report {

enum class column_align { left, right };

/// Writes `head` and then every row of `rows`, one line each: two spaces, then each cell padded
/// to its column's width (the widest cell of the column, head included) and separated from the
/// next by one space. Every row has the head's number of cells (missing cells print as empty).
inline void write_text_table(std::ostream& os, const std::vector<std::string>& head,
                             const std::vector<std::vector<std::string>>& rows,
                             column_align align = column_align::left) {
    std::vector<std::size_t> w(head.size());
    for (std::size_t c = 0; c < head.size(); ++c) {
        w[c] = head[c].size();
        for (const auto& row : rows)
            if (c < row.size()) w[c] = std::max(w[c], row[c].size());
    }
    auto line = [&](const std::vector<std::string>& cells) {
        os << " ";
        for (std::size_t c = 0; c < head.size(); ++c) {
            os << " " << (align == column_align::left ? std::left : std::right)
               << std::setw(static_cast<int>(w[c])) << (c < cells.size() ? cells[c] : std::string());
        }
        os << "\n";
    };
    line(head);
    for (const auto& row : rows) line(row);
}

} // namespace attnprop::report

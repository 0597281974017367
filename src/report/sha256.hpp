#pragma once
/// @file sha256.hpp
/// SHA-256 (FIPS 180-4), the hash of the fingerprints that make counterexample folders and
/// resume checkpoints tamper-evident (docs/reports.md). A fingerprint detects an edit; it is
/// not a signature: whoever edits a file can recompute it.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace attnprop::report {

/// Incremental SHA-256: update() any number of times, then digest() once.
class sha256 {
public:
    sha256();
    /// Appends bytes to the message. Precondition: digest() was not called yet.
    void update(std::string_view bytes);
    /// The 32-byte digest of everything appended. Ends the computation.
    std::array<std::uint8_t, 32> digest();

private:
    void block(const std::uint8_t* p);

    std::array<std::uint32_t, 8> h_;
    std::array<std::uint8_t, 64> buf_{};
    std::size_t used_ = 0;      ///< bytes in buf_
    std::uint64_t length_ = 0;  ///< message bytes so far
};

/// The SHA-256 of `bytes` as 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);

/// True when `s` has the shape of a sha256_hex value (64 lowercase hex digits).
bool is_sha256_hex(std::string_view s) noexcept;

} // namespace attnprop::report

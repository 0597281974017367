// SHA-256: the FIPS 180-4 / NIST example vectors, messages across the padding boundaries
// (55, 56, 64 bytes ...; reference digests from an independent implementation), and
// incremental updates in every chunk size agreeing with the one-shot digest.
#include "report/sha256.hpp"

#include <catch2/catch.hpp>

#include <string>

using attnprop::report::is_sha256_hex;
using attnprop::report::sha256;
using attnprop::report::sha256_hex;

namespace {

std::string pattern(std::size_t n) {
    std::string s(n, '\0');
    for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 7 + 3) % 256);
    return s;
}

std::string hex(const std::array<std::uint8_t, 32>& d) {
    static const char* digits = "0123456789abcdef";
    std::string s;
    for (auto b : d) {
        s += digits[b >> 4];
        s += digits[b & 15];
    }
    return s;
}

} // namespace

TEST_CASE("sha256: the NIST example messages", "[report][sha256]") {
    CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    CHECK(sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
                     "klmnopqrlmnopqrsmnopqrstnopqrstu") ==
          "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
    CHECK(sha256_hex(std::string(1000000, 'a')) ==
          "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256: lengths around the padding boundaries", "[report][sha256]") {
    const std::pair<std::size_t, const char*> cases[] = {
        {55, "e7313d333c272e639f790978283f9eb392e843d0f29b7016828bb1daa4aac70b"},
        {56, "4324d65f3c103567f5589c710bc08f8523f929a9272e3af36fc968e52abc6c27"},
        {57, "35df609437dcfea3279283ab79fd554e2bf78f8f7ae2de532d8ee300b09e8f73"},
        {63, "81c80242132f230c3bd41b3e63bbcff16107339549214a99614ff26664625055"},
        {64, "39e3d7b6b5d075d37d053ad89b24b41bef4f3c29760c84447cab3f3be1882241"},
        {65, "aacca6ff74fdbb296d165a45cecfa04e5127bc008770fbbdd48006f2d2fae95e"},
        {119, "9ce7368e4daf32341631b492e80359dc9f594b48453cd0dd5bf0b19279cc177e"},
        {120, "7836b787757e95e58b3ca5aec90b1b004e8deba1e50e9675af9cabf1a13a04b5"}};
    for (const auto& [n, want] : cases) {
        INFO("length " << n);
        CHECK(sha256_hex(pattern(n)) == want);
    }
}

TEST_CASE("sha256: incremental updates equal the one-shot digest", "[report][sha256]") {
    const std::string msg = pattern(300);
    const std::string whole = sha256_hex(msg);
    for (std::size_t chunk = 1; chunk <= 130; ++chunk) {
        sha256 h;
        for (std::size_t at = 0; at < msg.size(); at += chunk) h.update(std::string_view(msg).substr(at, chunk));
        INFO("chunk " << chunk);
        CHECK(hex(h.digest()) == whole);
    }
}

TEST_CASE("sha256: the shape of a hex digest", "[report][sha256]") {
    CHECK(is_sha256_hex(sha256_hex("x")));
    CHECK_FALSE(is_sha256_hex(""));
    CHECK_FALSE(is_sha256_hex(std::string(63, 'a')));
    CHECK_FALSE(is_sha256_hex(std::string(64, 'A')));
    CHECK_FALSE(is_sha256_hex(std::string(64, 'g')));
}

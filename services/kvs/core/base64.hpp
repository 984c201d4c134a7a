// base64.hpp - RFC 4648 base64 (standard alphabet, '=' padding) for the
// FILEVAL bytes of directory objects.
//
// base64_decode is strict so that decoding and re-encoding gives the same
// bytes (directory objects are content-addressed): it rejects characters
// outside the alphabet, missing or misplaced padding, whitespace and
// non-zero unused bits, returning std::nullopt. Pure functions, no throws
// except std::bad_alloc.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kvs {

std::string base64_encode(std::string_view data);
void base64_encode_append(std::string& out, std::string_view data);
std::optional<std::string> base64_decode(std::string_view text);

} // namespace kvs

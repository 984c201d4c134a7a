// blobref.hpp - names of content-addressed objects.
//
// A blobref is "sha1-" followed by the 40 lower-case hex digits of the SHA-1
// digest of the object's bytes, as in Flux's content store. Pure functions,
// safe to call from any thread. blobref_hash throws Error(EIO) only if
// OpenSSL itself fails (it does not for SHA-1 on a working installation).
#pragma once

#include <string>
#include <string_view>

namespace kvs {

inline constexpr std::string_view blobref_prefix = "sha1-";
inline constexpr size_t blobref_len = 45; // prefix + 40 hex digits

std::string blobref_hash(std::string_view data);
bool blobref_valid(std::string_view ref) noexcept;

} // namespace kvs

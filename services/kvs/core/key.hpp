// key.hpp - KVS keys: validation and splitting into path components.
//
// A key is a dot-separated path of names, "a.b.c". Each name is 1..255
// characters from [A-Za-z0-9_-]; a key has at most 64 names and at most 1024
// characters. The names are also the entry names of directory objects, so a
// name never needs escaping in the canonical JSON encoding (dirent.hpp).
//
// key_split throws Error(EINVAL) with one line naming the problem and the
// accepted form. The root directory is not a key for put/get; key_split_dir
// (for listings) accepts "." or "" as the root and returns no components.
// Pure functions, safe from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kvs {

inline constexpr size_t key_max_len = 1024;
inline constexpr size_t key_max_depth = 64;
inline constexpr size_t key_max_name = 255;

std::vector<std::string> key_split(std::string_view key);
std::vector<std::string> key_split_dir(std::string_view key);

// True if `name` is one valid path component (a directory entry name).
bool key_name_valid(std::string_view name) noexcept;

// The key joined from the first `n` components of `parts` ("a.b"); for messages.
std::string key_join(const std::vector<std::string>& parts, size_t n);

// `s` quoted for an error message: single quotes, bytes outside printable
// ASCII as \xNN, cut to 64 characters with "..." so a message stays one line.
std::string key_quote(std::string_view s);

} // namespace kvs

// dirent.hpp - directory objects and their entries.
//
// A directory is a map from entry name (one key component, see key.hpp) to an
// entry: FILEVAL holds a small value inline, FILEREF names a value stored as
// its own blob, DIRREF names a subdirectory object. Its encoding is canonical
// JSON text, entries sorted by name, no whitespace:
//   {"name":{"FILEVAL":"<base64>"},"f":{"FILEREF":"sha1-..."},"d":{"DIRREF":"sha1-..."}}
// so identical directories give identical bytes and therefore identical
// blobrefs; the empty directory is "{}".
//
// dir_encode does not throw except std::bad_alloc (names are trusted to be
// valid components: every path into a Directory in this library validates
// them). dir_decode validates everything - JSON syntax, one typed member per
// entry, valid names, no name twice in one object, base64, blobrefs - and
// throws Error(EPROTO) naming what is malformed. Value types, no shared state.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace kvs {

struct Dirent {
	enum class Type : uint8_t { FILEVAL, FILEREF, DIRREF };
	Type type;
	std::string data; // FILEVAL: the value bytes; FILEREF/DIRREF: a blobref
	bool operator==(const Dirent&) const = default;
};

using Directory = std::map<std::string, Dirent>;

std::string dir_encode(const Directory& d);
Directory dir_decode(std::string_view text);

// "FILEVAL", "FILEREF" or "DIRREF".
const char* dirent_type_name(Dirent::Type t) noexcept;

} // namespace kvs

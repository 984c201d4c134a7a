// lookup.hpp - resolving keys against a root, with fault-in support.
//
// A lookup walks from the root directory object through DIRREF entries. On a
// non-root broker the store is a partial cache: the first object the walk
// needs that the store does not hold (a directory, or the blob of a FILEREF)
// is returned as MISSING_OBJECT with its ref; the caller fetches it from its
// parent (ContentStore::store_ref), then calls again - each retry gets at
// least one object further. The root's store holds every object, so there a
// MISSING_OBJECT means a dangling reference.
//
// Errors: Error(EINVAL) a bad key or a root_ref that is not a blobref,
// Error(ENOENT) the key does not exist, Error(ENOTDIR) a component on the path
// is a value, Error(EISDIR) lookup() of a directory (lookup_dir of a value is
// ENOTDIR), Error(EPROTO) a corrupt directory object, Error(EIO) from a
// file-backed store. Not thread-safe.
#pragma once

#include "content.hpp"
#include "dirent.hpp"

#include <string>
#include <string_view>

namespace kvs {

struct Lookup {
	enum class Status { FOUND, MISSING_OBJECT };
	Status status;
	std::string value;       // FOUND: the value bytes (FILEREF resolved)
	std::string missing_ref; // MISSING_OBJECT: fetch this ref, then retry
};

Lookup lookup(ContentStore& store, const std::string& root_ref, std::string_view key);

struct Listing {
	enum class Status { FOUND, MISSING_OBJECT };
	Status status;
	Directory dir;           // FOUND: the directory's entries
	std::string missing_ref; // MISSING_OBJECT: fetch this ref, then retry
};

// The directory named `dirkey` ("." or "" = the root), for ls and dump.
Listing lookup_dir(ContentStore& store, const std::string& root_ref, std::string_view dirkey);

} // namespace kvs

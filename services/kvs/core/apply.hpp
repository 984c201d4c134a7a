// apply.hpp - the root's commit engine: applying a fence's ops to a root.
//
// apply_ops applies `ops` in order (last writer wins) copy-on-write, against
// the directory tree named by `root_ref`, and returns the new root ref:
//   1. walk: each op walks its path in an in-memory tree of the touched
//      directories; a directory object is loaded and decoded the first time a
//      path enters it and then edited in memory; missing intermediate
//      directories are created; a put replaces whatever was at its key (a
//      value or a whole subtree); unlinking a missing key does nothing.
//   2. store: every modified directory is encoded and stored once, bottom-up,
//      with the value blobs it newly references.
// Cost: O(ops x depth) map operations plus one load (a copy of the store's
// decoded directory, see ContentStore::find_dir) per touched directory and one
// encode+store per modified directory - not ops x depth encodes.
// Directories that did not change keep their refs (structural sharing), and
// a put of a value equal to the current one changes nothing, so applying the
// same ops twice yields the same root ref and stores nothing the second time.
//
// Values shorter than lim.inline_max bytes are stored inline (FILEVAL); values
// of inline_max bytes or more are stored as their own blob (FILEREF). 42 is
// Flux's rule: a value as long as a blobref ("sha1-" + 40 hex = 45 chars,
// serialised) is cheaper to reference than to copy into every directory
// version.
//
// All or nothing: every error is raised in step 1, before anything is stored:
//   Error(EINVAL) bad key or root_ref, Error(EFBIG) value over lim.max_value,
//   Error(ENOTDIR) a put below a value, Error(ENOENT) a directory object on
//   a path (or the root) is absent from the store, Error(EPROTO) a directory
//   object is corrupt; Error(EIO) from a file-backed store.
// Nothing is stored on error (directories the walk read stay cached in the
// store, which changes no namespace). Not thread-safe (uses the store).
#pragma once

#include "content.hpp"
#include "dirent.hpp"
#include "txn.hpp"

#include <string>
#include <vector>

namespace kvs {

struct Limits {
	size_t inline_max = 42;
	size_t max_value = 64u << 20;
};

struct Applied {
	std::string root_ref;
	size_t objects_stored = 0; // store() calls: modified directories + new value blobs
	size_t ops_applied = 0;    // ops processed, including no-op unlinks
};

Applied apply_ops(ContentStore& store, const std::string& root_ref, const std::vector<Op>& ops,
		  const Limits& lim = {});

// Stores the empty directory "{}" and returns its ref.
std::string empty_root(ContentStore& store);

// A copy of the decoded directory object `ref`; Error(ENOENT) naming `what` (e.g. the
// directory's key) if the store does not hold it, Error(EPROTO) if corrupt.
Directory dir_load(ContentStore& store, const std::string& ref, const std::string& what);

} // namespace kvs

/*
 * store.hpp: a storage server's objects, one local file each.
 *
 * Object `ino` is DIR/objects/<ino as 16 hex digits>; a missing object
 * reads as empty (size 0), so a file's objects come into being with their
 * first write.  Writes go to the page cache; fsync() puts an object and the
 * objects directory on disk, which is what a client's fsync waits for.
 *
 * capacity (bytes, 0 = none) caps the sum of object sizes, so a test can
 * fill a target: a write that would go past it fails with ENOSPC, as one
 * the local file system refuses does.  The sum is counted from the object
 * files at start-up and kept as objects grow, shrink and go.
 *
 * An object's times are its file's: the local file system sets mtime on
 * each write and atime on reads (as it is mounted: relatime by default);
 * set_times() puts times a client asked for (utimensat).
 *
 * Open descriptors are cached (at most kMaxOpen, any one closed when full).
 * Threading: one thread, the server's.  Errors: pfs::Error with the errno of
 * the failed system call (ENOSPC, EIO, ...) and a line naming the object.
 */
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "proto.hpp"

namespace pfs {

class Store {
public:
	static constexpr size_t kMaxOpen = 256;

	/* Opens (creating) DIR/objects. */
	Store(const std::string &dir, uint64_t capacity);
	~Store();
	Store(const Store &) = delete;
	Store &operator=(const Store &) = delete;

	/* Writes data at off; returns the object's size after. */
	uint64_t write(uint64_t ino, uint64_t off, std::string_view data);
	/* Up to len bytes at off, fewer at the object's end; *size gets its size. */
	std::string read(uint64_t ino, uint64_t off, uint64_t len, uint64_t *size);
	uint64_t size(uint64_t ino);
	/* The object's atime and mtime in ns since the epoch; 0, 0 if there is none. */
	std::pair<uint64_t, uint64_t> times(uint64_t ino);
	/* kOmit (proto.hpp) leaves a time as it is; no object: nothing to do. */
	void set_times(uint64_t ino, uint64_t atime_ns, uint64_t mtime_ns);
	void truncate(uint64_t ino, uint64_t size);
	/* Allocates [off, off+len) (posix_fallocate); returns the size after. */
	uint64_t allocate(uint64_t ino, uint64_t off, uint64_t len);
	/* The file system's figures, capacity-capped. */
	FsStat fs_stat();
	/* Removes the object; a missing one is not an error. */
	void destroy(uint64_t ino);
	void fsync(uint64_t ino);

	uint64_t objects() const { return sizes_.size(); }
	uint64_t used() const { return used_; }
	uint64_t capacity() const { return capacity_; }

private:
	std::string path(uint64_t ino) const;
	/* The object's descriptor; -1 when it does not exist and !create. */
	int fd(uint64_t ino, bool create);
	void reserve(uint64_t ino, uint64_t old_size, uint64_t new_size);

	std::string dir_;		/* DIR/objects */
	int dir_fd_ = -1;
	bool dir_dirty_ = false;	/* objects created or removed since its fsync */
	uint64_t capacity_;
	uint64_t used_ = 0;
	std::unordered_map<uint64_t, uint64_t> sizes_;	/* every object's size */
	std::unordered_map<uint64_t, int> open_;
};

} // namespace pfs

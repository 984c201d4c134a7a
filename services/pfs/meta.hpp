/*
 * meta.hpp: the namespace, kept by the metadata server (server 0).
 *
 * Directories, files and their layouts live in one SQLite file
 * (DIR/meta.db, WAL with synchronous=FULL), so every operation is one
 * transaction that is on disk when it is answered.  Inode numbers are never
 * reused (AUTOINCREMENT), so a file's objects cannot be mistaken for those
 * of a file removed before it.  A file's size and data are not here: they
 * are in its objects (layout.hpp).
 *
 * Paths are absolute ("/a/b"); empty components are skipped, "." and ".."
 * are refused, names are at most 255 bytes.  A new directory copies its
 * parent's default layout; a new file takes the layout asked for, else its
 * directory's default, and stripe_start = ino mod N spreads files' first
 * objects over the servers.
 *
 * Threading: one thread, the server's.  Errors: pfs::Error with POSIX
 * meanings (ENOENT, EEXIST, ENOTDIR, EISDIR, ENOTEMPTY, EINVAL, EBUSY) and
 * a line naming the path; EIO for SQLite failures.
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "proto.hpp"

struct sqlite3;

namespace pfs {

class Meta {
public:
	/* Opens or creates path for an instance of nservers servers; refuses
	 * a file made for another count (the layouts name servers). */
	Meta(const std::string &path, uint32_t nservers);
	~Meta();
	Meta(const Meta &) = delete;
	Meta &operator=(const Meta &) = delete;

	/* A client id never handed out before (they key message pieces). */
	uint32_t new_client();

	Attr lookup(const std::string &path);
	/* stripe_size 0 and stripe_count 0 inherit the directory's default;
	 * all: stripe_count 0 means every server.  An existing file is
	 * returned as it is unless excl (EEXIST). */
	Attr create(const std::string &path, uint32_t mode, bool excl, uint64_t stripe_size,
		    uint32_t stripe_count, bool all);
	Attr mkdir(const std::string &path, uint32_t mode);
	void rmdir(const std::string &path);
	std::vector<Dirent> readdir(const std::string &path);
	/* Returns the removed file's attributes (its objects are the caller's
	 * to destroy). */
	Attr unlink(const std::string &path);
	/* Returns the file it replaced (ino 0: none). */
	Attr rename(const std::string &from, const std::string &to);
	/* A directory's default layout for files created in it later. */
	Attr setstripe(const std::string &path, uint64_t stripe_size, uint32_t stripe_count,
		       bool all);

private:
	class Txn;
	struct Found {
		uint64_t parent = 0;	/* inode of the directory holding it */
		std::string name;	/* last component ("" for the root) */
		uint64_t ino = 0;	/* 0: the last component is missing */
	};
	Found resolve(const std::string &path);
	Attr attr(uint64_t ino);
	uint64_t child(uint64_t dir, const std::string &name);
	void exec(const char *sql);
	/* Drops the entry and its inode (within a transaction). */
	void remove(const Found &f);
	Attr insert(uint64_t parent, const std::string &name, Type type, uint32_t mode,
		    const Layout &layout);

	sqlite3 *db_ = nullptr;
	uint32_t nservers_;
};

} // namespace pfs

/*
 * meta.hpp: the namespace, kept by the metadata server (server 0).
 *
 * Directories, files, symbolic links, FIFOs, sockets and device nodes,
 * their owners, modes, times, link counts, layouts and user.* extended
 * attributes live in one SQLite file (DIR/meta.db, WAL with
 * synchronous=FULL), so every operation is one transaction that is on disk
 * when it is answered.  Inode numbers are never reused (AUTOINCREMENT), so
 * a file's objects cannot be mistaken for those of a file removed before
 * it.  A file's size and data are not here: they are in its objects
 * (layout.hpp); so are the times its writes and reads leave, which clients
 * combine with these (client_io.cpp).
 *
 * Paths are absolute ("/a/b"); empty components are skipped, "." and ".."
 * are refused, names are at most 255 bytes, a whole path at most kPathMax
 * (a FUSE mount hands over paths from its root, which may be longer than
 * one system call's PATH_MAX).  Symbolic links met on the way are followed
 * (their targets may hold "." and ".."), at most 40 of them (ELOOP); the
 * last component is followed only where asked (lookup's follow).  A new
 * directory copies its parent's default layout; a new file takes the
 * layout asked for, else its directory's default, and stripe_start = ino
 * mod N spreads files' first objects over the servers.  A new entry in a
 * set-group-ID directory takes the directory's group (a directory also
 * the bit).
 *
 * A full disk: the file keeps DIR/meta.db.reserve, kReserve bytes held
 * with fallocate.  An operation that removes or changes things (the server
 * decides which) and fails for want of space may release it
 * (release_reserve()) and run once more, so unlink, rmdir, rename and
 * setattr work when the data have taken every block; keep_reserve() takes
 * the space back once it is free again, with no restart.  Client ids are
 * handed out from blocks written ahead, so a new client rarely needs a write.
 *
 * Schema: PRAGMA user_version 2.  A file of version 1 (no version, made
 * before owners, times and links were kept) is migrated when opened: its
 * entries get the server's uid and gid and their mtime as atime and ctime.
 * A newer version is refused with one line.
 *
 * Threading: one thread, the server's.  Errors: pfs::Error with POSIX
 * meanings (ENOENT, EEXIST, ENOTDIR, EISDIR, ENOTEMPTY, EINVAL, EBUSY,
 * ELOOP, EPERM, EMLINK, ENODATA, ERANGE, EOPNOTSUPP) and a line naming the
 * path; ENOSPC when SQLite finds the disk full; EIO for other SQLite
 * failures.
 */
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "proto.hpp"

struct sqlite3;

namespace pfs {

class Meta {
public:
	static constexpr uint64_t kReserve = 4ULL << 20;
	static constexpr size_t kPathMax = 1 << 20;
	static constexpr size_t kXattrNameMax = 255;
	static constexpr size_t kXattrValueMax = 65536;
	static constexpr size_t kXattrTotalMax = 1 << 20;	/* per inode */
	static constexpr int kSchema = 2;

	/* Opens or creates path for an instance of nservers servers; refuses
	 * a file made for another count (the layouts name servers). */
	Meta(const std::string &path, uint32_t nservers);
	~Meta();
	Meta(const Meta &) = delete;
	Meta &operator=(const Meta &) = delete;

	/* A client id never handed out before (they key message pieces). */
	uint32_t new_client();

	Attr lookup(const std::string &path, bool follow = false);
	/* stripe_size 0 and stripe_count 0 inherit the directory's default;
	 * all: stripe_count 0 means every server.  An existing file is
	 * returned as it is unless excl (EEXIST). */
	Attr create(const std::string &path, uint32_t mode, bool excl, uint64_t stripe_size,
		    uint32_t stripe_count, bool all, Ids ids = {});
	Attr mkdir(const std::string &path, uint32_t mode, Ids ids = {});
	/* A FIFO, socket or device node (type of mode's S_IFMT bits). */
	Attr mknod(const std::string &path, uint32_t mode, uint64_t rdev, Ids ids = {});
	/* As symlink(2): a link at path to target. */
	Attr symlink(const std::string &target, const std::string &path, Ids ids = {});
	/* A new name to for the inode of from (not a directory). */
	Attr link(const std::string &from, const std::string &to);
	void rmdir(const std::string &path);
	std::vector<Dirent> readdir(const std::string &path);
	/* Removes one name; returns its inode's attributes with the links
	 * left (nlink 0: the inode is gone, its objects are the caller's to
	 * destroy). */
	Attr unlink(const std::string &path);
	/* Returns the inode whose name it replaced (ino 0: none) as unlink. */
	Attr rename(const std::string &from, const std::string &to);
	/* A directory's default layout for files created in it later. */
	Attr setstripe(const std::string &path, uint64_t stripe_size, uint32_t stripe_count,
		       bool all);
	/* chmod, chown (clearing set-id bits of non-directories), times;
	 * ctime always.  EPERM where POSIX says so for the caller.  path ""
	 * names inode ino (an open file's, whose name may have moved). */
	Attr setattr(const std::string &path, uint64_t ino, const SetAttr &s);
	/* flags: XATTR_CREATE (EEXIST if there), XATTR_REPLACE (ENODATA if not). */
	void setxattr(const std::string &path, const std::string &name, std::string_view value,
		      uint32_t flags);
	std::string getxattr(const std::string &path, const std::string &name);
	/* The names, each ending in NUL. */
	std::string listxattr(const std::string &path);
	void removexattr(const std::string &path, const std::string &name);

	/* Gives the reserve's space to the file system; false if it was not held. */
	bool release_reserve();
	/* Takes it back when the file system has room for it again. */
	void keep_reserve();

private:
	class Txn;
	struct Found {
		uint64_t parent = 0;	/* inode of the directory holding it */
		std::string name;	/* last component ("" for the root) */
		uint64_t ino = 0;	/* 0: the last component is missing */
	};
	Found resolve(const std::string &path, bool follow_last = false);
	Found existing(const std::string &path, bool follow_last = false);
	Attr attr(uint64_t ino);
	/* The entry's inode and type (0: none). */
	std::pair<uint64_t, Type> child(uint64_t dir, const std::string &name);
	void exec(const char *sql);
	void migrate(int version);
	/* Drops the name; its inode goes with its last link. */
	void remove(const Found &f);
	Attr insert(uint64_t parent, const std::string &name, Type type, uint32_t mode,
		    const Layout &layout, Ids ids, uint64_t rdev = 0,
		    const std::string &target = std::string());
	/* mtime and ctime of a directory whose entries changed. */
	void touch_dir(uint64_t dir);
	bool empty_dir(uint64_t dir);

	sqlite3 *db_ = nullptr;
	uint32_t nservers_;
	std::string reserve_;
	bool have_reserve_ = false;
	uint64_t next_client_ = 0, client_limit_ = 0;	/* ids below the limit are written */
};

} // namespace pfs

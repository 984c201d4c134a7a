/*
 * proto.hpp: the requests clients send to PFS servers, the replies, and
 * their binary encoding (services/common/codec.hpp).
 *
 * A request carries its op, the sender's client id (handed out by server 0
 * at HELLO; 0 before) and a call id the reply echoes, so the client matches
 * replies to calls (common/calls.hpp).  A reply carries the op it answers,
 * an errno value (0: success) with a one-line message, then the op's
 * results.  Decoding throws pfs::Error(EPROTO) naming what is truncated,
 * unknown or left over, so a bad frame never reaches the servers' code.
 *
 *   op         to              request                   reply
 *   HELLO      any server      client id, address        client id, server index, count
 *   STATS      any server      -                         data: the counters as JSON
 *   STATFS     any server      -                         fs: its file system's figures
 *   WRITE      object server   ino, offset, data         value: object size after
 *                              (or by RMA: length and
 *                              the client's buffer)
 *   READ       object server   ino, offset, length       data (short at the object's end),
 *                              (by RMA: the client's     value: object size; by RMA:
 *                              buffer)                   placed, the bytes written into
 *                                                        the client's buffer
 *   GETSIZE    object server   ino                       value: object size, its atime
 *                                                        and mtime (0: no object)
 *   TRUNC      object server   ino, size                 -
 *   DESTROY    object server   ino                       -
 *   FSYNC      object server   ino                       -  (the object is on disk)
 *   APPEND     object 0's      ino, offset: the size     value: where the append goes
 *              server          the client saw, length
 *   FALLOC     object server   ino, offset, length       value: object size after
 *   SETTIMES   object server   ino, atime, mtime         -  (kOmit: leave it)
 *   LOOKUP     server 0        path, follow              attr
 *   CREATE     server 0        path, mode, excl, layout, attr (of the new or existing file)
 *                              ids
 *   MKDIR      server 0        path, mode, ids           attr
 *   RMDIR      server 0        path                      -
 *   READDIR    server 0        path                      entries
 *   UNLINK     server 0        path                      attr of the name's inode (nlink 0:
 *                                                        gone, its objects to destroy)
 *   RENAME     server 0        path, path2               attr of a file it replaced (ino 0:
 *                                                        none; nlink 0: gone)
 *   SETSTRIPE  server 0        path, layout              attr (a directory's default)
 *   LINK       server 0        path, path2 (new name)    attr
 *   SYMLINK    server 0        path, path2 (target), ids attr
 *   MKNOD      server 0        path, mode (with type),   attr
 *                              rdev, ids
 *   SETATTR    server 0        path (""): ino), set      attr after
 *                              (kSet*), mode, ids,
 *                              atime, mtime, caller
 *   SETXATTR   server 0        path, path2 (name), data  -
 *                              (value), flags
 *   GETXATTR   server 0        path, path2 (name)        data: the value
 *   LISTXATTR  server 0        path                      data: names, each ending in NUL
 *   RMXATTR    server 0        path, path2 (name)        -
 *
 * "ids" are the uid and gid a new entry gets (its creator's); SETATTR's
 * caller ids decide what it may change (chmod, chown, times: owner or root).
 *
 * Bulk data (more than Fabric::kCtrlMax bytes) moves by RMA: the client
 * exposes its buffer (rma_addr, rma_key) and the server writes the bytes
 * read into it, or reads the bytes to write from it, in one operation
 * before it replies (server.hpp).
 */
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "layout.hpp"

namespace pfs {

enum class Op : uint8_t {
	HELLO = 1,
	STATS,
	WRITE,
	READ,
	GETSIZE,
	TRUNC,
	DESTROY,
	FSYNC,
	LOOKUP,
	CREATE,
	MKDIR,
	RMDIR,
	READDIR,
	UNLINK,
	RENAME,
	SETSTRIPE,
	APPEND,
	FALLOC,
	SETTIMES,
	STATFS,
	LINK,
	SYMLINK,
	MKNOD,
	SETATTR,
	SETXATTR,
	GETXATTR,
	LISTXATTR,
	RMXATTR,
};
constexpr uint8_t kOpLast = static_cast<uint8_t>(Op::RMXATTR);

const char *op_name(Op op) noexcept;
/* Ops only the metadata server (server 0) serves. */
inline bool op_is_meta(Op op)
{
	return (op >= Op::LOOKUP && op <= Op::SETSTRIPE) || op >= Op::LINK;
}

/* Kinds of namespace entries; only REG has objects. */
enum class Type : uint8_t { REG = 1, DIR, LNK, FIFO, SOCK, CHR, BLK };
constexpr uint8_t kTypeLast = static_cast<uint8_t>(Type::BLK);

/* A time field that is to be left as it is (SETTIMES, SETATTR). */
constexpr uint64_t kOmit = UINT64_MAX;

/* SETATTR's set: which fields to change. */
enum : uint32_t {
	kSetMode = 1,
	kSetUid = 2,
	kSetGid = 4,
	kSetAtime = 8,		/* to atime_ns */
	kSetMtime = 16,		/* to mtime_ns */
	kSetAtimeNow = 32,
	kSetMtimeNow = 64,
	kSetSize = 128,		/* the data changed size: mtime and ctime now */
};

struct Attr {
	uint64_t ino = 0;
	Type type = Type::REG;
	uint32_t mode = 0;	/* permission bits and set-id/sticky (07777) */
	uint32_t uid = 0, gid = 0;
	uint32_t nlink = 1;	/* names; a directory: 2 + its subdirectories */
	uint64_t rdev = 0;	/* CHR/BLK */
	uint64_t atime_ns = 0, mtime_ns = 0, ctime_ns = 0;	/* the namespace's; a file's */
	Layout layout;		/* a directory's: the default of new files */
	std::string target;	/* LNK: what it points to */
};

/* A server's file system (STATFS): bytes and inodes. */
struct FsStat {
	uint64_t bytes = 0, free = 0, avail = 0;
	uint64_t files = 0, ffree = 0;
};

/* Owner ids of a new entry, or of a caller. */
struct Ids {
	uint32_t uid = 0, gid = 0;
};

/* What a SETATTR changes (kSet*), and who asks. */
struct SetAttr {
	uint32_t set = 0;
	uint32_t mode = 0;
	uint32_t uid = 0, gid = 0;
	uint64_t atime_ns = 0, mtime_ns = 0;
	Ids caller;
};

struct Dirent {
	std::string name;
	uint64_t ino = 0;
	Type type = Type::REG;
};

struct Request {
	Op op = Op::HELLO;
	uint32_t client = 0;
	uint64_t call = 0;
	uint64_t ino = 0;
	uint64_t offset = 0;	/* READ/WRITE/FALLOC/APPEND; TRUNC: the size */
	uint64_t length = 0;	/* READ/FALLOC/APPEND; WRITE by RMA */
	std::string_view data;	/* WRITE's bytes, HELLO's address, SETXATTR's value */
	std::string path, path2;
	uint32_t mode = 0;
	uint32_t uid = 0, gid = 0;	/* a new entry's owner */
	SetAttr attrs;		/* SETATTR */
	uint32_t flags = 0;	/* SETXATTR: XATTR_CREATE/XATTR_REPLACE */
	uint64_t rdev = 0;	/* MKNOD */
	uint64_t atime_ns = kOmit, mtime_ns = kOmit;	/* SETTIMES, SETATTR */
	bool follow = false;	/* LOOKUP: a symlink at the end is followed */
	bool excl = false;	/* CREATE: fail with EEXIST if it exists */
	uint64_t stripe_size = 0;	/* CREATE/SETSTRIPE; 0: inherit */
	uint32_t stripe_count = 0;	/* 0: inherit (CREATE), every server */
	bool stripe_all = false;	/* stripe_count 0 means "every server", not "inherit" */
	bool rma = false;	/* READ/WRITE: the data moves by RMA on this buffer */
	uint64_t rma_addr = 0, rma_key = 0;
};

struct Reply {
	Op op = Op::HELLO;
	uint64_t call = 0;
	int32_t errnum = 0;
	std::string error;
	uint64_t value = 0;
	uint32_t index = 0, servers = 0;	/* HELLO */
	uint64_t atime_ns = 0, mtime_ns = 0;	/* GETSIZE: the object's */
	uint64_t placed = 0;	/* READ by RMA: bytes written into the client's buffer */
	std::string data;
	Attr attr;
	FsStat fs;
	std::vector<Dirent> entries;
};

std::string request_encode(const Request &q);
/* Request::data points into frame: keep frame alive while q is used. */
Request request_decode(std::string_view frame);
/* The header alone (op, client, call), for answering a request whose body
 * did not decode: op may be one this side does not know.  Throws if even
 * the header is short. */
Request request_header(std::string_view frame);
std::string reply_encode(const Reply &r);
/* The call id of a reply, without decoding the rest; throws if short. */
uint64_t reply_call(std::string_view frame);
/* A reply with an error may echo an unknown op (a refused request's). */
Reply reply_decode(std::string_view frame);

} // namespace pfs

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
 *   WRITE      object server   ino, offset, data         value: object size after
 *   READ       object server   ino, offset, length       data (short at the object's end),
 *                                                        value: object size
 *   GETSIZE    object server   ino                       value: object size
 *   TRUNC      object server   ino, size                 -
 *   DESTROY    object server   ino                       -
 *   FSYNC      object server   ino                       -  (the object is on disk)
 *   LOOKUP     server 0        path                      attr
 *   CREATE     server 0        path, mode, excl, layout  attr (of the new or existing file)
 *   MKDIR      server 0        path, mode                attr
 *   RMDIR      server 0        path                      -
 *   READDIR    server 0        path                      entries
 *   UNLINK     server 0        path                      attr of the removed file
 *   RENAME     server 0        path, path2               attr of a file it replaced (ino 0: none)
 *   SETSTRIPE  server 0        path, layout              attr (a directory's default)
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
};
constexpr uint8_t kOpLast = static_cast<uint8_t>(Op::SETSTRIPE);

const char *op_name(Op op) noexcept;
/* Ops only the metadata server (server 0) serves. */
inline bool op_is_meta(Op op)
{
	return op >= Op::LOOKUP;
}

enum class Type : uint8_t { REG = 1, DIR = 2 };

struct Attr {
	uint64_t ino = 0;
	Type type = Type::REG;
	uint32_t mode = 0;
	uint64_t mtime_ns = 0;
	Layout layout;		/* a directory's: the default of new files */
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
	uint64_t offset = 0;	/* READ/WRITE; TRUNC: the size */
	uint64_t length = 0;	/* READ */
	std::string_view data;	/* WRITE's bytes, HELLO's address (into the frame) */
	std::string path, path2;
	uint32_t mode = 0;
	bool excl = false;	/* CREATE: fail with EEXIST if it exists */
	uint64_t stripe_size = 0;	/* CREATE/SETSTRIPE; 0: inherit */
	uint32_t stripe_count = 0;	/* 0: inherit (CREATE), every server */
	bool stripe_all = false;	/* stripe_count 0 means "every server", not "inherit" */
};

struct Reply {
	Op op = Op::HELLO;
	uint64_t call = 0;
	int32_t errnum = 0;
	std::string error;
	uint64_t value = 0;
	uint32_t index = 0, servers = 0;	/* HELLO */
	std::string data;
	Attr attr;
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

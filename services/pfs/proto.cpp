/*
 * proto.cpp: the request and reply encoding of proto.hpp.
 *
 * Each message's fields are listed once (request_fields, reply_fields) and
 * walked by Out, which writes them, or In, which reads them back, so the
 * two directions cannot disagree.
 */
#include "proto.hpp"

#include <cerrno>
#include <type_traits>

#include "common/codec.hpp"
#include "error.hpp"

namespace pfs {

namespace {

constexpr const char *kRequest = "pfs request";
constexpr const char *kReply = "pfs reply";

/* Integers, enums and flags go as 1, 4 or 8 bytes, as their type is wide. */
template <typename T> constexpr bool kWire = sizeof(T) == 1 || sizeof(T) == 4 || sizeof(T) == 8;

class Out {
public:
	static constexpr bool reading = false;
	template <typename T> void num(const T &v)
	{
		static_assert(kWire<T>);
		if constexpr (sizeof(T) == 1)
			w_.u8(static_cast<uint8_t>(v));
		else if constexpr (sizeof(T) == 4)
			w_.u32(static_cast<uint32_t>(v));
		else
			w_.u64(static_cast<uint64_t>(v));
	}
	void str(std::string_view s) { w_.str(s); }
	std::string take() { return w_.take(); }

private:
	svc::Writer w_;
};

class In {
public:
	static constexpr bool reading = true;
	In(std::string_view frame, const char *what) : r_(frame, what), what_(what) {}
	template <typename T> void num(T &v)
	{
		static_assert(kWire<T>);
		if constexpr (sizeof(T) == 1)
			v = static_cast<T>(r_.u8());
		else if constexpr (sizeof(T) == 4)
			v = static_cast<T>(r_.u32());
		else
			v = static_cast<T>(r_.u64());
		if constexpr (std::is_same_v<T, Type>)
			if (static_cast<uint8_t>(v) < 1 || static_cast<uint8_t>(v) > kTypeLast)
				throw Error(EPROTO, std::string(what_) + ": file type " +
							    std::to_string(static_cast<int>(v)) +
							    " (expected 1-" + std::to_string(kTypeLast) + ")");
	}
	void str(std::string &s) { s = r_.str(); }
	void str(std::string_view &s) { s = r_.view(); }
	/* How many of n items of at least min bytes can be left. */
	void count(uint32_t n, size_t min) const
	{
		if (n > r_.left() / min)
			throw Error(EPROTO, std::string(what_) + ": " + std::to_string(n) +
						    " entries cannot fit");
	}
	void done() const { r_.done(); }

private:
	svc::Reader r_;
	const char *what_;
};

/* Q is Request (reading) or const Request (writing); the header is apart. */
template <typename IO, typename Q> void request_fields(IO &io, Q &q)
{
	switch (q.op) {
	case Op::HELLO:
		io.str(q.data);
		break;
	case Op::STATS:
	case Op::STATFS:
		break;
	case Op::WRITE:
		io.num(q.ino);
		io.num(q.offset);
		io.str(q.data);
		io.num(q.rma);
		if (q.rma) {
			io.num(q.length);
			io.num(q.rma_addr);
			io.num(q.rma_key);
		}
		break;
	case Op::READ:
		io.num(q.ino);
		io.num(q.offset);
		io.num(q.length);
		io.num(q.rma);
		if (q.rma) {
			io.num(q.rma_addr);
			io.num(q.rma_key);
		}
		break;
	case Op::APPEND:
	case Op::FALLOC:
		io.num(q.ino);
		io.num(q.offset);
		io.num(q.length);
		break;
	case Op::SETTIMES:
		io.num(q.ino);
		io.num(q.atime_ns);
		io.num(q.mtime_ns);
		break;
	case Op::TRUNC:
		io.num(q.ino);
		io.num(q.offset);
		break;
	case Op::GETSIZE:
	case Op::DESTROY:
	case Op::FSYNC:
		io.num(q.ino);
		break;
	case Op::CREATE:
	case Op::SETSTRIPE:
		io.str(q.path);
		if (q.op == Op::CREATE) {
			io.num(q.mode);
			io.num(q.excl);
			io.num(q.uid);
			io.num(q.gid);
		}
		io.num(q.stripe_size);
		io.num(q.stripe_count);
		io.num(q.stripe_all);
		break;
	case Op::MKDIR:
	case Op::MKNOD:
		io.str(q.path);
		io.num(q.mode);
		io.num(q.uid);
		io.num(q.gid);
		if (q.op == Op::MKNOD)
			io.num(q.rdev);
		break;
	case Op::SYMLINK:
		io.str(q.path);
		io.str(q.path2);
		io.num(q.uid);
		io.num(q.gid);
		break;
	case Op::RENAME:
	case Op::LINK:
	case Op::GETXATTR:
	case Op::RMXATTR:
		io.str(q.path);
		io.str(q.path2);
		break;
	case Op::SETXATTR:
		io.str(q.path);
		io.str(q.path2);
		io.str(q.data);
		io.num(q.flags);
		break;
	case Op::SETATTR:
		io.str(q.path);
		io.num(q.ino);
		io.num(q.attrs.set);
		io.num(q.attrs.mode);
		io.num(q.attrs.uid);
		io.num(q.attrs.gid);
		io.num(q.attrs.atime_ns);
		io.num(q.attrs.mtime_ns);
		io.num(q.attrs.caller.uid);
		io.num(q.attrs.caller.gid);
		break;
	case Op::LOOKUP:
		io.str(q.path);
		io.num(q.follow);
		break;
	case Op::RMDIR:
	case Op::READDIR:
	case Op::UNLINK:
	case Op::LISTXATTR:
		io.str(q.path);
		break;
	}
}

template <typename IO, typename A> void attr_fields(IO &io, A &a)
{
	io.num(a.ino);
	io.num(a.type);
	io.num(a.mode);
	io.num(a.uid);
	io.num(a.gid);
	io.num(a.nlink);
	io.num(a.rdev);
	io.num(a.atime_ns);
	io.num(a.mtime_ns);
	io.num(a.ctime_ns);
	io.num(a.layout.stripe_size);
	io.num(a.layout.stripe_count);
	io.num(a.layout.stripe_start);
	io.str(a.target);
}

/* The results of a successful reply. */
template <typename IO, typename R> void reply_fields(IO &io, R &p)
{
	switch (p.op) {
	case Op::HELLO:
		io.num(p.value);
		io.num(p.index);
		io.num(p.servers);
		break;
	case Op::STATS:
	case Op::GETXATTR:
	case Op::LISTXATTR:
		io.str(p.data);
		break;
	case Op::STATFS:
		io.num(p.fs.bytes);
		io.num(p.fs.free);
		io.num(p.fs.avail);
		io.num(p.fs.files);
		io.num(p.fs.ffree);
		break;
	case Op::READ:
		io.num(p.value);
		io.str(p.data);
		io.num(p.placed);
		break;
	case Op::GETSIZE:
		io.num(p.value);
		io.num(p.atime_ns);
		io.num(p.mtime_ns);
		break;
	case Op::WRITE:
	case Op::APPEND:
	case Op::FALLOC:
		io.num(p.value);
		break;
	case Op::TRUNC:
	case Op::DESTROY:
	case Op::FSYNC:
	case Op::SETTIMES:
	case Op::RMDIR:
	case Op::SETXATTR:
	case Op::RMXATTR:
		break;
	case Op::READDIR: {
		uint32_t n = static_cast<uint32_t>(p.entries.size());
		io.num(n);
		if constexpr (IO::reading) {
			io.count(n, 4 + 8 + 1);
			p.entries.resize(n);
		}
		for (auto &e : p.entries) {
			io.str(e.name);
			io.num(e.ino);
			io.num(e.type);
		}
		break;
	}
	case Op::LOOKUP:
	case Op::CREATE:
	case Op::MKDIR:
	case Op::UNLINK:
	case Op::RENAME:
	case Op::SETSTRIPE:
	case Op::LINK:
	case Op::SYMLINK:
	case Op::MKNOD:
	case Op::SETATTR:
		attr_fields(io, p.attr);
		break;
	}
}

void check_op(uint8_t op, const char *what)
{
	if (op < 1 || op > kOpLast)
		throw Error(EPROTO, std::string(what) + " of unknown op " + std::to_string(op) +
					    " (expected 1-" + std::to_string(kOpLast) + ")");
}

} // namespace

const char *op_name(Op op) noexcept
{
	switch (op) {
	case Op::HELLO: return "hello";
	case Op::STATS: return "stats";
	case Op::WRITE: return "write";
	case Op::READ: return "read";
	case Op::GETSIZE: return "getsize";
	case Op::TRUNC: return "truncate";
	case Op::DESTROY: return "destroy";
	case Op::FSYNC: return "fsync";
	case Op::LOOKUP: return "lookup";
	case Op::CREATE: return "create";
	case Op::MKDIR: return "mkdir";
	case Op::RMDIR: return "rmdir";
	case Op::READDIR: return "readdir";
	case Op::UNLINK: return "unlink";
	case Op::RENAME: return "rename";
	case Op::SETSTRIPE: return "setstripe";
	case Op::APPEND: return "append";
	case Op::FALLOC: return "fallocate";
	case Op::SETTIMES: return "settimes";
	case Op::STATFS: return "statfs";
	case Op::LINK: return "link";
	case Op::SYMLINK: return "symlink";
	case Op::MKNOD: return "mknod";
	case Op::SETATTR: return "setattr";
	case Op::SETXATTR: return "setxattr";
	case Op::GETXATTR: return "getxattr";
	case Op::LISTXATTR: return "listxattr";
	case Op::RMXATTR: return "removexattr";
	}
	return "unknown";
}

std::string request_encode(const Request &q)
{
	Out o;
	o.num(q.op);
	o.num(q.client);
	o.num(q.call);
	request_fields(o, q);
	return o.take();
}

Request request_header(std::string_view frame)
{
	In in(frame, kRequest);
	Request q;
	in.num(q.op);
	in.num(q.client);
	in.num(q.call);
	return q;
}

Request request_decode(std::string_view frame)
{
	In in(frame, kRequest);
	Request q;
	in.num(q.op);
	check_op(static_cast<uint8_t>(q.op), kRequest);
	in.num(q.client);
	in.num(q.call);
	request_fields(in, q);
	in.done();
	return q;
}

std::string reply_encode(const Reply &p)
{
	Out o;
	o.num(p.op);
	o.num(p.call);
	o.num(p.errnum);
	o.str(p.error);
	if (!p.errnum)
		reply_fields(o, p);
	return o.take();
}

uint64_t reply_call(std::string_view frame)
{
	In in(frame, kReply);
	Reply p;
	in.num(p.op);
	in.num(p.call);
	return p.call;
}

Reply reply_decode(std::string_view frame)
{
	In in(frame, kReply);
	Reply p;
	in.num(p.op);
	in.num(p.call);
	in.num(p.errnum);
	in.str(p.error);
	/* A refusal echoes whatever op the request had, known or not. */
	if (!p.errnum) {
		check_op(static_cast<uint8_t>(p.op), kReply);
		reply_fields(in, p);
	}
	in.done();
	return p;
}

} // namespace pfs

/*
 * proto.cpp: the request and reply encoding of proto.hpp.
 */
#include "proto.hpp"

#include <cerrno>

#include "common/codec.hpp"
#include "error.hpp"

namespace pfs {

using svc::Reader;
using svc::Writer;

namespace {

constexpr const char *kRequest = "pfs request";
constexpr const char *kReply = "pfs reply";

void attr_put(Writer &w, const Attr &a)
{
	w.u64(a.ino);
	w.u8(static_cast<uint8_t>(a.type));
	w.u32(a.mode);
	w.u64(a.mtime_ns);
	w.u64(a.layout.stripe_size);
	w.u32(a.layout.stripe_count);
	w.u32(a.layout.stripe_start);
}

Type type_get(Reader &r, const char *what)
{
	uint8_t t = r.u8();
	if (t != static_cast<uint8_t>(Type::REG) && t != static_cast<uint8_t>(Type::DIR))
		throw Error(EPROTO, std::string(what) + ": file type " + std::to_string(t) +
					    " (expected 1 or 2)");
	return static_cast<Type>(t);
}

Attr attr_get(Reader &r)
{
	Attr a;
	a.ino = r.u64();
	a.type = type_get(r, kReply);
	a.mode = r.u32();
	a.mtime_ns = r.u64();
	a.layout.stripe_size = r.u64();
	a.layout.stripe_count = r.u32();
	a.layout.stripe_start = r.u32();
	return a;
}

Op op_get(Reader &r, const char *what)
{
	uint8_t op = r.u8();
	if (op < 1 || op > kOpLast)
		throw Error(EPROTO, std::string(what) + " of unknown op " + std::to_string(op) +
					    " (expected 1-" + std::to_string(kOpLast) + ")");
	return static_cast<Op>(op);
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
	}
	return "unknown";
}

std::string request_encode(const Request &q)
{
	Writer w;
	w.u8(static_cast<uint8_t>(q.op));
	w.u32(q.client);
	w.u64(q.call);
	switch (q.op) {
	case Op::HELLO:
		w.str(q.data);
		break;
	case Op::STATS:
		break;
	case Op::WRITE:
		w.u64(q.ino);
		w.u64(q.offset);
		w.str(q.data);
		break;
	case Op::READ:
		w.u64(q.ino);
		w.u64(q.offset);
		w.u64(q.length);
		break;
	case Op::TRUNC:
		w.u64(q.ino);
		w.u64(q.offset);
		break;
	case Op::GETSIZE:
	case Op::DESTROY:
	case Op::FSYNC:
		w.u64(q.ino);
		break;
	case Op::CREATE:
		w.str(q.path);
		w.u32(q.mode);
		w.u8(q.excl);
		w.u64(q.stripe_size);
		w.u32(q.stripe_count);
		w.u8(q.stripe_all);
		break;
	case Op::SETSTRIPE:
		w.str(q.path);
		w.u64(q.stripe_size);
		w.u32(q.stripe_count);
		w.u8(q.stripe_all);
		break;
	case Op::MKDIR:
		w.str(q.path);
		w.u32(q.mode);
		break;
	case Op::RENAME:
		w.str(q.path);
		w.str(q.path2);
		break;
	case Op::LOOKUP:
	case Op::RMDIR:
	case Op::READDIR:
	case Op::UNLINK:
		w.str(q.path);
		break;
	}
	return w.take();
}

Request request_header(std::string_view frame)
{
	Reader r(frame, kRequest);
	Request q;
	q.op = static_cast<Op>(r.u8());
	q.client = r.u32();
	q.call = r.u64();
	return q;
}

Request request_decode(std::string_view frame)
{
	Reader r(frame, kRequest);
	Request q;
	q.op = op_get(r, kRequest);
	q.client = r.u32();
	q.call = r.u64();
	switch (q.op) {
	case Op::HELLO:
		q.data = r.view();
		break;
	case Op::STATS:
		break;
	case Op::WRITE:
		q.ino = r.u64();
		q.offset = r.u64();
		q.data = r.view();
		break;
	case Op::READ:
		q.ino = r.u64();
		q.offset = r.u64();
		q.length = r.u64();
		break;
	case Op::TRUNC:
		q.ino = r.u64();
		q.offset = r.u64();
		break;
	case Op::GETSIZE:
	case Op::DESTROY:
	case Op::FSYNC:
		q.ino = r.u64();
		break;
	case Op::CREATE:
		q.path = r.str();
		q.mode = r.u32();
		q.excl = r.u8();
		q.stripe_size = r.u64();
		q.stripe_count = r.u32();
		q.stripe_all = r.u8();
		break;
	case Op::SETSTRIPE:
		q.path = r.str();
		q.stripe_size = r.u64();
		q.stripe_count = r.u32();
		q.stripe_all = r.u8();
		break;
	case Op::MKDIR:
		q.path = r.str();
		q.mode = r.u32();
		break;
	case Op::RENAME:
		q.path = r.str();
		q.path2 = r.str();
		break;
	case Op::LOOKUP:
	case Op::RMDIR:
	case Op::READDIR:
	case Op::UNLINK:
		q.path = r.str();
		break;
	}
	r.done();
	return q;
}

std::string reply_encode(const Reply &p)
{
	Writer w;
	w.u8(static_cast<uint8_t>(p.op));
	w.u64(p.call);
	w.u32(static_cast<uint32_t>(p.errnum));
	w.str(p.error);
	if (p.errnum)
		return w.take();
	switch (p.op) {
	case Op::HELLO:
		w.u64(p.value);
		w.u32(p.index);
		w.u32(p.servers);
		break;
	case Op::STATS:
		w.str(p.data);
		break;
	case Op::READ:
		w.u64(p.value);
		w.str(p.data);
		break;
	case Op::WRITE:
	case Op::GETSIZE:
		w.u64(p.value);
		break;
	case Op::TRUNC:
	case Op::DESTROY:
	case Op::FSYNC:
	case Op::RMDIR:
		break;
	case Op::READDIR:
		w.u32(static_cast<uint32_t>(p.entries.size()));
		for (const auto &e : p.entries) {
			w.str(e.name);
			w.u64(e.ino);
			w.u8(static_cast<uint8_t>(e.type));
		}
		break;
	case Op::LOOKUP:
	case Op::CREATE:
	case Op::MKDIR:
	case Op::UNLINK:
	case Op::RENAME:
	case Op::SETSTRIPE:
		attr_put(w, p.attr);
		break;
	}
	return w.take();
}

uint64_t reply_call(std::string_view frame)
{
	Reader r(frame, kReply);
	r.u8();
	return r.u64();
}

Reply reply_decode(std::string_view frame)
{
	Reader r(frame, kReply);
	Reply p;
	uint8_t op = r.u8();
	p.call = r.u64();
	p.errnum = static_cast<int32_t>(r.u32());
	p.error = r.str();
	/* A refusal echoes whatever op the request had, known or not. */
	p.op = static_cast<Op>(op);
	if (p.errnum) {
		r.done();
		return p;
	}
	if (op < 1 || op > kOpLast)
		throw Error(EPROTO, std::string(kReply) + " of unknown op " + std::to_string(op) +
					    " (expected 1-" + std::to_string(kOpLast) + ")");
	switch (p.op) {
	case Op::HELLO:
		p.value = r.u64();
		p.index = r.u32();
		p.servers = r.u32();
		break;
	case Op::STATS:
		p.data = r.str();
		break;
	case Op::READ:
		p.value = r.u64();
		p.data = r.str();
		break;
	case Op::WRITE:
	case Op::GETSIZE:
		p.value = r.u64();
		break;
	case Op::TRUNC:
	case Op::DESTROY:
	case Op::FSYNC:
	case Op::RMDIR:
		break;
	case Op::READDIR: {
		uint32_t n = r.u32();
		/* Each entry takes at least 13 bytes: bounds a bad count. */
		if (n > r.left() / 13)
			throw Error(EPROTO, std::string(kReply) + ": " + std::to_string(n) +
						    " directory entries cannot fit");
		for (uint32_t i = 0; i < n; i++) {
			Dirent e;
			e.name = r.str();
			e.ino = r.u64();
			e.type = type_get(r, kReply);
			p.entries.push_back(std::move(e));
		}
		break;
	}
	case Op::LOOKUP:
	case Op::CREATE:
	case Op::MKDIR:
	case Op::UNLINK:
	case Op::RENAME:
	case Op::SETSTRIPE:
		p.attr = attr_get(r);
		break;
	}
	r.done();
	return p;
}

} // namespace pfs

/*
 * client_io.cpp: the striped data path of client.hpp: reads and writes cut
 * at stripe units and sent to each unit's server, sizes from the objects'
 * sizes (a glimpse), truncate and fsync on every object.
 */
#include "client.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <future>
#include <utility>
#include <vector>

#include "common/spin.hpp"
#include "error.hpp"

namespace pfs {

namespace {

/* Completion of requests fanned out over servers; all on the progress
 * thread, so no lock. */
struct Gather {
	size_t pending = 0;
	int err = 0;
	std::string what;
	void note(const Reply &r)
	{
		if (r.errnum && !err) {
			err = r.errnum;
			what = r.error;
		}
	}
};

} // namespace

struct ReadOp {
	Attr file;
	char *buf;
	uint64_t len, off;
	Gather g;
	bool shortened = false;			/* some unit came back short */
	std::vector<int64_t> obj_size;		/* -1: unknown */
	Client::IoDone done;
};

void Client::fan_out(std::vector<std::pair<uint32_t, Request>> &&reqs,
		     const std::function<void(uint32_t k, const Reply &r)> &got)
{
	/* The callbacks run on the progress thread, each got() before done is
	 * set; what they share outlives this frame (the last may still be
	 * inside set_value when the wait returns). */
	if (reqs.empty())
		return;
	auto g = std::make_shared<Gather>();
	auto done = std::make_shared<std::promise<void>>();
	auto fut = done->get_future();
	g->pending = reqs.size();
	for (uint32_t k = 0; k < reqs.size(); k++)
		submit(reqs[k].first, std::move(reqs[k].second), [g, done, &got, k](Reply &&r) {
			g->note(r);
			if (!r.errnum && got)
				got(k, r);
			if (--g->pending == 0)
				done->set_value();
		});
	fut.wait();
	if (g->err)
		throw Error(g->err, g->what);
}

void Client::each_object(const Attr &file, Op op,
			 const std::function<void(uint32_t obj, Request &q)> &fill,
			 const std::function<void(uint32_t obj, const Reply &r)> &got)
{
	std::vector<std::pair<uint32_t, Request>> reqs(file.layout.stripe_count);
	for (uint32_t j = 0; j < file.layout.stripe_count; j++) {
		reqs[j].first = file.layout.server_of(j, nservers_);
		reqs[j].second.op = op;
		reqs[j].second.ino = file.ino;
		if (fill)
			fill(j, reqs[j].second);
	}
	fan_out(std::move(reqs), got);
}

void Client::each_server(Op op, const std::function<void(uint32_t s, const Reply &r)> &got)
{
	std::vector<std::pair<uint32_t, Request>> reqs(nservers_);
	for (uint32_t s = 0; s < nservers_; s++) {
		reqs[s].first = s;
		reqs[s].second.op = op;
	}
	fan_out(std::move(reqs), got);
}

Client::Glimpse Client::glimpse(const Attr &file)
{
	Glimpse out;
	each_object(file, Op::GETSIZE, nullptr, [&](uint32_t j, const Reply &r) {
		out.size = std::max(out.size, layout_file_end(file.layout, j, r.value));
		out.atime_ns = std::max(out.atime_ns, r.atime_ns);
		out.mtime_ns = std::max(out.mtime_ns, r.mtime_ns);
	});
	return out;
}

void Client::truncate(const Attr &file, uint64_t size)
{
	each_object(file, Op::TRUNC,
		    [&](uint32_t j, Request &q) {
			    q.offset = layout_object_size(file.layout, j, size);
		    },
		    nullptr);
	/* Objects that do not exist keep no times: the namespace does. */
	SetAttr s;
	s.set = kSetSize;
	try {
		setattr("", file, s);
	} catch (const Error &e) {
		if (e.errnum() != ENOENT)	/* an open file whose last name is gone */
			throw;
	}
}

uint64_t Client::append(const Attr &file, const void *buf, uint64_t len)
{
	Request q;
	q.op = Op::APPEND;
	q.ino = file.ino;
	q.offset = size(file);
	q.length = len;
	uint64_t off = call(file.layout.server_of(0, nservers_), std::move(q)).value;
	write(file, buf, len, off);
	return off;
}

void Client::fallocate(const Attr &file, uint64_t off, uint64_t len)
{
	/* Object j's share of a file range is one object range (RAID-0). */
	each_object(file, Op::FALLOC,
		    [&](uint32_t j, Request &q) {
			    q.offset = layout_object_size(file.layout, j, off);
			    q.length = layout_object_size(file.layout, j, off + len) - q.offset;
		    },
		    nullptr);
}

FsStat Client::statfs()
{
	FsStat sum;
	each_server(Op::STATFS, [&](uint32_t, const Reply &r) {
		sum.bytes += r.fs.bytes;
		sum.free += r.fs.free;
		sum.avail += r.fs.avail;
		sum.files += r.fs.files;
		sum.ffree += r.fs.ffree;
	});
	return sum;
}

void Client::fsync(const Attr &file)
{
	each_object(file, Op::FSYNC, nullptr, nullptr);
}

void Client::destroy(const Attr &file)
{
	each_object(file, Op::DESTROY, nullptr, nullptr);
}

void Client::write_async(const Attr &file, const void *buf, uint64_t len, uint64_t off,
			 IoDone done)
{
	auto chunks = layout_chunks(file.layout, off, len);
	if (chunks.empty()) {
		done(0, std::string());
		return;
	}
	auto g = std::make_shared<Gather>();
	g->pending = chunks.size();
	auto done_p = std::make_shared<IoDone>(std::move(done));
	const char *base = static_cast<const char *>(buf);
	for (const Chunk &c : chunks) {
		Request q;
		q.op = Op::WRITE;
		q.ino = file.ino;
		q.offset = c.obj_off;
		q.data = std::string_view(base + c.buf_off, c.len);
		submit(
			file.layout.server_of(c.obj, nservers_), std::move(q),
			[g, done_p, len](Reply &&r) {
				g->note(r);
				if (--g->pending)
					return;
				if (g->err)
					(*done_p)(-g->err, g->what);
				else
					(*done_p)(static_cast<int64_t>(len), std::string());
			},
			const_cast<char *>(base + c.buf_off));	/* only read by the server */
	}
}

void Client::read_async(const Attr &file, void *buf, uint64_t len, uint64_t off, IoDone done)
{
	auto chunks = layout_chunks(file.layout, off, len);
	if (chunks.empty()) {
		done(0, std::string());
		return;
	}
	auto op = std::make_shared<ReadOp>();
	op->file = file;
	op->buf = static_cast<char *>(buf);
	op->len = len;
	op->off = off;
	op->obj_size.assign(file.layout.stripe_count, -1);
	op->done = std::move(done);
	op->g.pending = chunks.size();
	for (const Chunk &c : chunks) {
		Request q;
		q.op = Op::READ;
		q.ino = file.ino;
		q.offset = c.obj_off;
		q.length = c.len;
		submit(
			file.layout.server_of(c.obj, nservers_), std::move(q),
			[this, op, c](Reply &&r) {
				op->g.note(r);
				if (!r.errnum) {
					/* By RMA the bytes are in place already. */
					size_t n = std::min<size_t>(r.placed, c.len);
					if (!r.data.empty()) {
						n = std::min<size_t>(r.data.size(), c.len);
						std::memcpy(op->buf + c.buf_off, r.data.data(), n);
					}
					/* A hole, or the end of the file: read_finish decides. */
					std::memset(op->buf + c.buf_off + n, 0, c.len - n);
					op->shortened |= n < c.len;
					op->obj_size[c.obj] = static_cast<int64_t>(r.value);
				}
				if (--op->g.pending == 0)
					read_finish(op);
			},
			op->buf + c.buf_off);
	}
}

/*
 * All units answered.  If one came back short the range may reach past the
 * end of the file, or cross a hole: the file's size tells, and it is the
 * largest end any object implies, so the objects not yet heard from are
 * asked for their sizes first.
 */
void Client::read_finish(const std::shared_ptr<ReadOp> &op)
{
	if (op->g.err) {
		op->done(-op->g.err, op->g.what);
		return;
	}
	if (!op->shortened) {
		op->done(static_cast<int64_t>(op->len), std::string());
		return;
	}
	std::vector<uint32_t> unknown;
	for (uint32_t j = 0; j < op->obj_size.size(); j++)
		if (op->obj_size[j] < 0)
			unknown.push_back(j);
	if (!unknown.empty()) {
		op->g.pending = unknown.size();
		op->shortened = true;
		for (uint32_t j : unknown) {
			Request q;
			q.op = Op::GETSIZE;
			q.ino = op->file.ino;
			submit(op->file.layout.server_of(j, nservers_), std::move(q),
			       [this, op, j](Reply &&r) {
				       op->g.note(r);
				       op->obj_size[j] = r.errnum ? 0 : static_cast<int64_t>(r.value);
				       if (--op->g.pending == 0)
					       read_finish(op);
			       });
		}
		return;
	}
	uint64_t size = 0;
	for (uint32_t j = 0; j < op->obj_size.size(); j++)
		size = std::max(size, layout_file_end(op->file.layout, j,
						      static_cast<uint64_t>(op->obj_size[j])));
	uint64_t n = size > op->off ? std::min(op->len, size - op->off) : 0;
	op->done(static_cast<int64_t>(n), std::string());
}

namespace {

int64_t wait_io(const std::function<void(Client::IoDone)> &start)
{
	auto p = std::make_shared<std::promise<std::pair<int64_t, std::string>>>();
	auto fut = p->get_future();
	start([p](int64_t res, const std::string &what) { p->set_value({res, what}); });
	/* Looked at for kSpin first, as Client::call does: an answer that
	 * comes within it is taken without a wake-up.  Then blocked on, for
	 * as long as it takes: the calls beneath end within their deadlines,
	 * and the buffer is the caller's again only once they have. */
	svc::await_answer(fut, std::chrono::seconds(0));
	auto [res, what] = fut.get();
	if (res < 0)
		throw Error(static_cast<int>(-res), what);
	return res;
}

} // namespace

int64_t Client::read(const Attr &file, void *buf, uint64_t len, uint64_t off)
{
	return wait_io([&](IoDone d) { read_async(file, buf, len, off, std::move(d)); });
}

int64_t Client::write(const Attr &file, const void *buf, uint64_t len, uint64_t off)
{
	return wait_io([&](IoDone d) { write_async(file, buf, len, off, std::move(d)); });
}

} // namespace pfs

/*
 * conn.cpp: reading, answering and writing on one connection, without ever
 * waiting for the client (conn.hpp).
 */
#include "conn.hpp"

#include <algorithm>
#include <cerrno>
#include <sys/socket.h>
#include <unistd.h>

#include "http.hpp"
#include "reactor.hpp"

namespace kvsrv {

namespace {

constexpr int max_rounds = 16;
constexpr size_t read_chunk = 64 * 1024;
/* Replies are handed to the kernel once this much is made, not only at the
 * end of a pipelined burst. */
constexpr size_t write_chunk = 64 * 1024;
/* A buffer emptied is given back when it had grown past this. */
constexpr size_t keep_capacity = 64 * 1024;
/* A rejected request may be followed by bytes the client already sent:
 * reading them before close() keeps the kernel from resetting the
 * connection, which could destroy the error reply in flight.  The
 * reactor's timer ends the lingering, never a sleeping thread. */
constexpr size_t linger_max = 1 << 20;
constexpr auto linger_time = std::chrono::seconds(1);

enum class Next { wait, close, dropped };

size_t unsent(const Conn &c)
{
	return c.out.size() - c.sent;
}

/* An empty buffer that had grown is given back. */
void release(std::string &s)
{
	if (s.empty() && s.capacity() > keep_capacity)
		std::string().swap(s);
}

/* Keeps Metrics::buffered equal to what every connection's buffers hold. */
void account(Conn &c, Metrics &metrics)
{
	size_t now = c.in.capacity() + c.out.capacity();
	if (now == c.accounted)
		return;
	metrics.note_buffered(static_cast<int64_t>(now) - static_cast<int64_t>(c.accounted));
	c.accounted = now;
}

/* Writes what the socket takes of c.out: 0 all of it, 1 the rest must wait
 * for writable, or -errno (counted) when the client is gone. */
int write_out(Conn &c, Metrics &metrics)
{
	while (c.sent < c.out.size()) {
		ssize_t n = send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			c.sent += static_cast<size_t>(n);
			c.last_active = Conn::Clock::now();
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			/* Written bytes are not kept: appending behind them
			 * would otherwise move them again and again. */
			if (c.sent >= write_chunk) {
				c.out.erase(0, c.sent);
				c.sent = 0;
			}
			return 1;
		}
		metrics.write_errors.fetch_add(1, std::memory_order_relaxed);
		return -errno;
	}
	c.out.clear();
	c.sent = 0;
	release(c.out);
	return 0;
}

/* Starts a request's reply with 503 when the connections' buffers hold
 * more than --max-buffered, so that many clients not reading cannot take
 * the server's memory. */
bool over_budget(Conn &c, const ServeContext &ctx, size_t more)
{
	auto held = static_cast<size_t>(std::max<int64_t>(0, ctx.metrics.buffered.load()));
	if (held + more <= ctx.opt.bounds.max_buffered)
		return false;
	ctx.metrics.over_budget.fetch_add(1, std::memory_order_relaxed);
	ctx.metrics.count_status(503);
	append_response(c.out, 503, "the server's buffers are full (--max-buffered)\n", false,
			"Retry-After: 1\r\n");
	c.after = Conn::After::linger;
	return true;
}

/*
 * Answers the whole requests in c.in while the unsent replies stay under
 * --max-unsent, writing them as they are made; sends "100 Continue" to a
 * client waiting for it.  made counts the replies; full says it stopped at
 * --max-unsent; false when the client is gone.
 */
bool answer(Conn &c, const ServeContext &ctx, int &made, bool &full)
{
	std::string chunked;
	size_t off = 0;
	for (;;) {
		full = unsent(c) >= ctx.opt.bounds.max_unsent;
		if (full || c.after != Conn::After::keep)
			break;
		Parse p = parse_request(std::string_view(c.in).substr(off), ctx.opt.limits, chunked);
		if (p.kind == Parse::incomplete) {
			if (p.head_done && !c.head_done) {
				c.head_done = true;
				if (over_budget(c, ctx, p.content_length))
					break;
			}
			if (p.expect_continue && !c.continue_sent) {
				c.out += continue_response;
				c.continue_sent = true;
			}
			break;
		}
		if (p.kind == Parse::rejected) {
			ctx.metrics.count_status(p.status);
			append_response(c.out, p.status, std::string(p.why) + "\n", false);
			c.after = Conn::After::linger;
			break;
		}
		if (!over_budget(c, ctx, 0) && !ctx.handler.handle(p.req, c.out))
			c.after = Conn::After::close;
		off += p.length;
		made++;
		c.head_done = c.continue_sent = false;
		c.request_start = Conn::Clock::now();
		if (unsent(c) >= write_chunk && write_out(c, ctx.metrics) < 0)
			return false;
	}
	c.in.erase(0, off);
	if (c.after != Conn::After::keep)
		c.in.clear();
	release(c.in);
	return true;
}

/* Reads and drops what the client still sends after a rejection: close once
 * it has shut down its side, sent linger_max, or the reactor's timer ends it. */
Next drain(Conn &c)
{
	char buf[4096];
	while (c.lingered < linger_max) {
		ssize_t n = recv(c.fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return Next::wait;
		if (n <= 0)
			return Next::close;
		c.lingered += static_cast<size_t>(n);
	}
	return Next::close;
}

/* Half-closes after the last reply, so the client sees it whole. */
Next start_linger(Conn &c)
{
	shutdown(c.fd, SHUT_WR);
	c.lingering = true;
	c.linger_until = Conn::Clock::now() + linger_time;
	return drain(c);
}

/* The rounds of writing, answering and reading (conn_serve). */
Next serve(Conn &c, const ServeContext &ctx)
{
	c.yielded = false;
	if (c.lingering)
		return drain(c);
	char buf[read_chunk];
	auto t_read = Conn::Clock::now();
	for (int round = 0; round < max_rounds; round++) {
		int made = 0;
		bool full = false;
		if (!answer(c, ctx, made, full))
			return Next::dropped;
		int w = write_out(c, ctx.metrics);
		auto latency = Conn::Clock::now() - t_read;
		for (int i = 0; i < made; i++)
			ctx.metrics.latency.record(latency);
		if (w < 0)
			return Next::dropped;
		if (w == 0 && full)	/* written: answer what waited behind it */
			continue;
		if (w == 0 && c.after == Conn::After::linger)
			return start_linger(c);
		if (w == 0 && (c.after == Conn::After::close || c.peer_done))
			return Next::close;
		/* Back-pressure: no more reading while the replies wait. */
		if (c.after != Conn::After::keep || c.peer_done ||
		    unsent(c) >= ctx.opt.bounds.max_unsent)
			return Next::wait;
		ssize_t n = recv(c.fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return Next::wait;
		if (n < 0)
			return Next::close;
		t_read = Conn::Clock::now();
		if (n == 0) {	/* the rest is answered and written, then closed */
			c.peer_done = true;
			continue;
		}
		if (c.in.empty())
			c.request_start = t_read;
		c.in.append(buf, static_cast<size_t>(n));
		c.last_active = t_read;
	}
	/* Out of rounds with requests perhaps read but not answered: back
	 * through the reactor, behind the other connections. */
	c.yielded = true;
	return Next::wait;
}

/* What an idle connection waits for and until when (c.mu held). */
void set_deadline(Conn &c, const Options &opt)
{
	auto silent = c.last_active + opt.idle_timeout;
	if (c.lingering) {
		c.wait = Conn::Wait::linger;
		c.deadline = c.linger_until;
	} else if (unsent(c)) {
		c.wait = Conn::Wait::reply;
		c.deadline = silent;
	} else if (c.in.empty()) {
		c.wait = Conn::Wait::request;
		c.deadline = silent;
	} else {
		/* Whole phases, not gaps between bytes: the head within
		 * --header-timeout of its first byte, then the request at
		 * --min-body-rate on average. */
		auto phase = c.request_start + opt.bounds.header_timeout;
		if (c.head_done)
			phase += std::chrono::duration_cast<Conn::Clock::duration>(
				std::chrono::duration<double>(static_cast<double>(c.in.size()) /
							      static_cast<double>(opt.bounds.min_body_rate)));
		c.wait = silent < phase ? Conn::Wait::stalled
					: c.head_done ? Conn::Wait::body : Conn::Wait::header;
		c.deadline = std::min(silent, phase);
	}
}

} // namespace

Conn::~Conn()
{
	if (fd >= 0)
		::close(fd);
}

void conn_close_locked(Conn &c, Metrics &metrics)
{
	if (c.state == Conn::State::closed)
		return;
	c.state = Conn::State::closed;
	::close(c.fd);
	c.fd = -1;
	std::string().swap(c.in);
	std::string().swap(c.out);
	c.sent = 0;
	metrics.note_buffered(-static_cast<int64_t>(c.accounted));
	c.accounted = 0;
	metrics.open.fetch_sub(1, std::memory_order_relaxed);
}

void conn_close(Conn &c, Metrics &metrics)
{
	std::lock_guard lock(c.mu);
	conn_close_locked(c, metrics);
}

void conn_expire_locked(Conn &c, Metrics &metrics)
{
	std::atomic<uint64_t> *counter = nullptr;
	switch (c.wait) {
	case Conn::Wait::request: counter = &metrics.idle_closed; break;
	case Conn::Wait::header: counter = &metrics.header_timeouts; break;
	case Conn::Wait::body: counter = &metrics.body_too_slow; break;
	case Conn::Wait::stalled: counter = &metrics.stalled_dropped; break;
	case Conn::Wait::reply: counter = &metrics.write_timeouts; break;
	case Conn::Wait::linger: break;
	}
	if (counter)
		counter->fetch_add(1, std::memory_order_relaxed);
	conn_close_locked(c, metrics);
}

bool conn_fresh(const Conn &c)
{
	return c.in.empty() && c.out.empty() && !c.lingering;
}

void conn_refuse(Conn &c, Metrics &metrics, int status, const char *why)
{
	std::string reply;
	append_response(reply, status, std::string(why) + "\n", false);
	metrics.count_status(status);
	if (send(c.fd, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		metrics.write_errors.fetch_add(1, std::memory_order_relaxed);
	/* The request that made the connection readable is unread: read what
	 * has arrived, without waiting, so close() does not reset the reply. */
	char buf[4096];
	for (size_t drained = 0; drained < linger_max;) {
		ssize_t n = recv(c.fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n <= 0)
			break;
		drained += static_cast<size_t>(n);
	}
	shutdown(c.fd, SHUT_WR);
	conn_close(c, metrics);
}

void conn_serve(const std::shared_ptr<Conn> &cp, const ServeContext &ctx)
{
	Conn &c = *cp;
	Next next = serve(c, ctx);
	account(c, ctx.metrics);
	std::lock_guard lock(c.mu);
	if (next != Next::wait || ctx.stopping.load(std::memory_order_acquire)) {
		conn_close_locked(c, ctx.metrics);
		return;
	}
	bool want_in = c.lingering || (c.after == Conn::After::keep && !c.peer_done &&
					unsent(c) < ctx.opt.bounds.max_unsent);
	/* Armed for writable, a yielded connection comes back at once. */
	if (c.home.rearm(c, want_in, unsent(c) > 0 || c.yielded) < 0) {
		conn_close_locked(c, ctx.metrics);
		return;
	}
	set_deadline(c, ctx.opt);
	c.state = Conn::State::idle;
}

} // namespace kvsrv

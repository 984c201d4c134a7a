/*
 * conn.cpp: reading, answering and writing on one connection (conn.hpp).
 */
#include "conn.hpp"

#include <cerrno>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http.hpp"
#include "reactor.hpp"

namespace kvsrv {

namespace {

constexpr int max_rounds = 16;
constexpr size_t read_chunk = 64 * 1024;
/* A rejected request may be followed by bytes the client already sent:
 * reading them before close() keeps the kernel from resetting the
 * connection, which could destroy the error reply in flight. */
constexpr size_t linger_max = 1 << 20;
constexpr auto linger_time = std::chrono::seconds(1);

enum class Next { keep, close, linger, dropped };

int ms_until(Conn::Clock::time_point deadline)
{
	auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
									  Conn::Clock::now());
	return left.count() < 0 ? 0 : static_cast<int>(left.count()) + 1;
}

/* Writes c.out whole; waits for the client at most --idle-timeout at a time. */
int flush(Conn &c, const ServeContext &ctx)
{
	size_t done = 0;
	while (done < c.out.size()) {
		ssize_t n = send(c.fd, c.out.data() + done, c.out.size() - done, MSG_NOSIGNAL);
		if (n > 0) {
			done += static_cast<size_t>(n);
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			ctx.metrics.write_errors.fetch_add(1, std::memory_order_relaxed);
			return -errno;
		}
		pollfd p = {c.fd, POLLOUT, 0};
		int r = poll(&p, 1, static_cast<int>(ctx.opt.idle_timeout.count()));
		if (r == 0) {
			ctx.metrics.write_timeouts.fetch_add(1, std::memory_order_relaxed);
			return -ETIMEDOUT;
		}
		if (r < 0 && errno != EINTR)
			return -errno;
	}
	c.out.clear();
	return 0;
}

/* Answers every whole request in c.in and writes the answers. */
Next answer(Conn &c, const ServeContext &ctx, Conn::Clock::time_point t_read)
{
	size_t off = 0;
	int answered = 0;
	Next next = Next::keep;
	while (next == Next::keep) {
		Parse p = parse_request(std::string_view(c.in).substr(off), ctx.opt.limits);
		if (p.kind == Parse::incomplete)
			break;
		if (p.kind == Parse::rejected) {
			ctx.metrics.count_status(p.status);
			append_response(c.out, p.status, std::string(p.why) + "\n", false);
			next = Next::linger;
			break;
		}
		if (!ctx.handler.handle(p.req, c.out))
			next = Next::close;
		off += p.length;
		answered++;
	}
	c.in.erase(0, off);
	if (!c.out.empty() && flush(c, ctx) < 0)
		return Next::dropped;
	auto latency = Conn::Clock::now() - t_read;
	for (int i = 0; i < answered; i++)
		ctx.metrics.latency.record(latency);
	return next;
}

void linger_close(Conn &c, Metrics &metrics)
{
	shutdown(c.fd, SHUT_WR);
	auto deadline = Conn::Clock::now() + linger_time;
	char buf[4096];
	for (size_t drained = 0; drained < linger_max;) {
		pollfd p = {c.fd, POLLIN, 0};
		if (poll(&p, 1, ms_until(deadline)) <= 0)
			break;
		ssize_t n = read(c.fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		drained += static_cast<size_t>(n);
	}
	conn_close(c, metrics);
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
	metrics.open.fetch_sub(1, std::memory_order_relaxed);
}

void conn_close(Conn &c, Metrics &metrics)
{
	std::lock_guard lock(c.mu);
	conn_close_locked(c, metrics);
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

void conn_serve(const std::shared_ptr<Conn> &c, const ServeContext &ctx)
{
	char buf[read_chunk];
	for (int round = 0; round < max_rounds; round++) {
		ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			conn_close(*c, ctx.metrics);
			return;
		}
		c->in.append(buf, static_cast<size_t>(n));
		switch (answer(*c, ctx, Conn::Clock::now())) {
		case Next::keep: continue;
		case Next::linger: linger_close(*c, ctx.metrics); return;
		case Next::close:
		case Next::dropped: conn_close(*c, ctx.metrics); return;
		}
	}
	std::lock_guard lock(c->mu);
	if (ctx.stopping.load(std::memory_order_acquire) || c->home.rearm(*c) < 0) {
		conn_close_locked(*c, ctx.metrics);
		return;
	}
	c->state = Conn::State::idle;
	c->last_active = Conn::Clock::now();
}

} // namespace kvsrv

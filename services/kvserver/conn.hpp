/*
 * conn.hpp: one client connection and the code that serves it (README.md,
 * "Architecture" and "Limits and deadlines").
 *
 * Ownership: a Conn is shared (std::shared_ptr) by its reactor's table and
 * whoever serves it.  Its state says who may touch it:
 *
 *   idle    armed in its reactor's epoll set (one-shot) for reading, for
 *           writing or both; the reactor may drop it once its deadline
 *           has passed
 *   busy    taken by one thread (a worker, or the reactor in reuseport
 *           mode), which alone reads and writes fd and the buffers
 *   closed  fd closed; the reactor drops it from its table
 *
 * No thread ever waits on a client: reads and writes are non-blocking, and
 * what would block goes back to the reactor (armed for readable or
 * writable) with a deadline.  Changes of state, fd, deadline and wait
 * happen under mu.
 */
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "handler.hpp"
#include "metrics.hpp"
#include "options.hpp"

namespace kvsrv {

class Reactor;

struct Conn {
	enum class State { idle, busy, closed };
	/* What an idle connection waits for; says what its deadline counts. */
	enum class Wait { request, header, body, stalled, reply, linger };
	/* What happens once every reply is written. */
	enum class After { keep, close, linger };
	using Clock = std::chrono::steady_clock;

	Conn(int fd_, uint64_t id_, Reactor &home_, Clock::time_point deadline_)
		: id(id_), home(home_), fd(fd_), deadline(deadline_)
	{
	}
	~Conn();

	const uint64_t id;		/* epoll's key for it; never reused */
	Reactor &home;
	std::mutex mu;
	State state = State::idle;	/* guarded by mu */
	int fd;				/* guarded by mu */
	Clock::time_point deadline;	/* guarded by mu: the reactor drops it (idle) past this */
	Wait wait = Wait::request;	/* guarded by mu */
	Clock::time_point queued_at;	/* set before it enters a work queue */

	/* The serving thread's alone (state busy), or the reactor's (idle). */
	Clock::time_point last_active = Clock::now();	/* a byte read or written */
	Clock::time_point request_start;	/* the first byte of the request being read */
	Clock::time_point linger_until;
	std::string in;			/* bytes read, not yet a whole request */
	std::string out;		/* replies; out[0, sent) are written */
	size_t sent = 0;
	size_t accounted = 0;		/* bytes of in and out counted in Metrics::buffered */
	size_t lingered = 0;		/* bytes read and dropped while lingering */
	After after = After::keep;
	bool head_done = false;		/* the request being read has its whole head */
	bool continue_sent = false;	/* "100 Continue" sent for it */
	bool peer_done = false;		/* the client shut down its side: nothing more to read */
	bool lingering = false;		/* half-closed after a rejection: draining the client */
	bool yielded = false;		/* its thread ran out of rounds, work may be left */
};

/* What serving needs from the server; outlives every Conn. */
struct ServeContext {
	Handler &handler;
	Metrics &metrics;
	const Options &opt;
	const std::atomic<bool> &stopping;
};

/*
 * Serves a busy connection: writes what is unsent, answers every whole
 * request it has read (pipelining) while its unsent replies stay under
 * --max-unsent, reads what has arrived, and either rearms the connection
 * (idle, with a deadline) or closes it.  Bounded rounds keep one eager
 * client from holding a thread; nothing in it blocks.
 */
void conn_serve(const std::shared_ptr<Conn> &c, const ServeContext &ctx);

/* Closes the connection once (any state) and gives its buffers back; the
 * reactor forgets it later.  The _locked form is for a caller that holds c.mu. */
void conn_close(Conn &c, Metrics &metrics);
void conn_close_locked(Conn &c, Metrics &metrics);

/* An idle connection past its deadline (c.mu held): counted by what it
 * waited for, then closed. */
void conn_expire_locked(Conn &c, Metrics &metrics);

/* Whether a connection that no worker can take now may be refused with a
 * whole reply: nothing read or written on it yet. */
bool conn_fresh(const Conn &c);

/* Best effort, without waiting: writes a whole reply on a fresh connection,
 * then closes it. */
void conn_refuse(Conn &c, Metrics &metrics, int status, const char *why);

} // namespace kvsrv

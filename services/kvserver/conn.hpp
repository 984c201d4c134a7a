/*
 * conn.hpp: one client connection and the code that serves it (README.md,
 * "Architecture").
 *
 * Ownership: a Conn is shared (std::shared_ptr) by its reactor's table and
 * whoever serves it.  Its state says who may touch it:
 *
 *   idle    armed in its reactor's epoll set (one-shot); the reactor may
 *           expire it after --idle-timeout
 *   busy    taken by one thread (a worker, or the reactor in reuseport
 *           mode), which alone reads and writes fd, in and out
 *   closed  fd closed; the reactor drops it from its table
 *
 * Changes of state, fd and last_active happen under mu.
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
	using Clock = std::chrono::steady_clock;

	Conn(int fd_, uint64_t id_, Reactor &home_) : id(id_), home(home_), fd(fd_) {}
	~Conn();

	const uint64_t id;		/* epoll's key for it; never reused */
	Reactor &home;
	std::mutex mu;
	State state = State::idle;	/* guarded by mu */
	int fd;				/* guarded by mu */
	Clock::time_point last_active = Clock::now();	/* guarded by mu */
	Clock::time_point queued_at;	/* set before it enters a work queue */
	std::string in;			/* bytes read, not yet a whole request */
	std::string out;		/* replies not yet written */
};

/* What serving needs from the server; outlives every Conn. */
struct ServeContext {
	Handler &handler;
	Metrics &metrics;
	const Options &opt;
	const std::atomic<bool> &stopping;
};

/*
 * Serves a busy connection: reads what has arrived, answers every whole
 * request in it (pipelining), writes the answers, and either rearms the
 * connection (idle) or closes it.  Bounded rounds of reading keep one
 * eager client from holding a thread.
 */
void conn_serve(const std::shared_ptr<Conn> &c, const ServeContext &ctx);

/* Closes the connection once (any state); the reactor forgets it later.
 * The _locked form is for a caller that holds c.mu. */
void conn_close(Conn &c, Metrics &metrics);
void conn_close_locked(Conn &c, Metrics &metrics);

/* Best effort: writes a whole reply on a fresh connection, then closes it. */
void conn_refuse(Conn &c, Metrics &metrics, int status, const char *why);

} // namespace kvsrv

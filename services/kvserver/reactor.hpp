/*
 * reactor.hpp: an epoll loop that accepts connections, watches the idle
 * ones and hands each that becomes readable or writable to dispatch
 * (README.md, "Architecture").  With a work queue there is one reactor and
 * dispatch queues the connection for a worker; with reuseport every thread
 * runs a reactor on its own listener and dispatch serves the connection at
 * once.
 *
 * Connections are armed one-shot: an event hands a connection to exactly
 * one thread, which rearm()s it when done, for reading, writing or both.
 * The reactor is also the connections' timer: every quarter of the shorter
 * of --idle-timeout and --header-timeout (at most 250 ms), and before it
 * hands a ready connection to a thread, it closes the idle connections
 * past their deadline (conn.hpp) and counts them by what they waited for.  Out of file descriptors, it stops watching the listener
 * until the next check rather than spin on a connection it cannot accept.
 *
 * Threads: run() on one thread; wake() and rearm() from any.  The Reactor
 * must outlive every Conn it accepted.
 */
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <unordered_map>

#include "conn.hpp"
#include "metrics.hpp"
#include "options.hpp"

namespace kvsrv {

class Reactor {
public:
	using Dispatch = std::function<void(const std::shared_ptr<Conn> &)>;

	/* Takes listen_fd (non-blocking, listening); throws std::system_error. */
	Reactor(int listen_fd, Dispatch dispatch, Metrics &metrics, const Options &opt);
	~Reactor();
	Reactor(const Reactor &) = delete;
	Reactor &operator=(const Reactor &) = delete;

	/* Until stopping and wake(); then closes the listener and idle connections. */
	void run(const std::atomic<bool> &stopping);
	void wake();
	/* Arms c for one more event, readable and/or writable; c.mu held.
	 * 0 or -errno. */
	int rearm(Conn &c, bool readable, bool writable);

private:
	void close_fds();
	void accept_all();
	void pause_accept(bool pause);
	void expire(bool all);

	int listen_fd_;
	int epoll_fd_ = -1;
	int wake_fd_ = -1;
	Dispatch dispatch_;
	Metrics &metrics_;
	std::chrono::milliseconds idle_timeout_;
	std::chrono::milliseconds scan_period_;
	bool accept_paused_ = false;	/* out of descriptors: retried at the next scan */
	uint64_t next_id_ = 2;	/* 0: the listener, 1: the wake-up */
	std::unordered_map<uint64_t, std::shared_ptr<Conn>> conns_;	/* run()'s thread only */
};

} // namespace kvsrv

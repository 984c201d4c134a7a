/*
 * server.hpp: loggp-kvserver put together (README.md, "Architecture"):
 * the store (replayed from its log), the listeners, the reactors, the work
 * queue and its workers.
 *
 * Lifecycle: the constructor binds every listener (so port() is known and
 * clients may connect); start() starts the threads; stop() stops accepting,
 * lets each worker finish the connection it holds, closes the rest, makes
 * the log durable and joins every thread.  stop() is also run by the
 * destructor.  Errors in the constructor throw std::system_error.
 */
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "conn.hpp"
#include "handler.hpp"
#include "metrics.hpp"
#include "options.hpp"
#include "reactor.hpp"
#include "store.hpp"
#include "wal.hpp"
#include "work_queue.hpp"

namespace kvsrv {

class Server {
public:
	explicit Server(const Options &opt);
	~Server();
	Server(const Server &) = delete;
	Server &operator=(const Server &) = delete;

	int port() const { return port_; }
	void start();
	void stop();
	/* The fields of the JSON line at exit, without braces. */
	std::string summary();

private:
	using Queue = WorkQueue<std::shared_ptr<Conn>>;

	int listen_socket();
	void enqueue(const std::shared_ptr<Conn> &c);
	void work();
	Gauges gauges();

	Options opt_;
	Metrics metrics_;
	std::unique_ptr<Store> store_;
	std::unique_ptr<Wal> wal_;
	std::unique_ptr<Handler> handler_;
	std::unique_ptr<Queue> queue_;
	std::atomic<bool> stopping_{false};
	ServeContext ctx_;
	std::vector<std::unique_ptr<Reactor>> reactors_;
	std::vector<std::thread> reactor_threads_;
	std::vector<std::thread> workers_;
	int port_ = 0;
	bool stopped_ = false;
};

} // namespace kvsrv

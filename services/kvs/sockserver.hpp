/*
 * sockserver.hpp: a broker's Unix-socket front door for loggp-kvs (the CLI)
 * and other local tools.
 *
 * Protocol: newline-delimited JSON, one request line -> one response line,
 * any number per connection.  Each connection has its own kvs::Client, so
 * puts buffer per connection until its commit.  Values travel base64.
 *   {"op":"put","key":K,"value":B64}        -> {"ok":true}
 *   {"op":"unlink","key":K}                 -> {"ok":true}
 *   {"op":"commit"}                         -> {"ok":true,"version":V}
 *   {"op":"fence","name":N,"nprocs":P}      -> {"ok":true,"version":V}
 *   {"op":"get","key":K[,"version":V]}      -> {"ok":true,"value":B64}
 *   {"op":"ls","key":D[,"version":V]}       -> {"ok":true,"entries":{name:{"type":T,...}}}
 *   {"op":"version"[,"wait":V]}             -> {"ok":true,"version":V}
 *   {"op":"stats"}                          -> {"ok":true,"stats":{...}}
 * Failures: {"ok":false,"errnum":E,"error":"<one line>"}.  A commit or fence
 * that fails with ETIMEDOUT has an unknown outcome: its operations left this
 * broker and the root may still apply them.  A request line longer than a
 * put of the largest value (Limits::max_value) is answered with EMSGSIZE and
 * the connection is closed.
 *
 * Threads: one accepts, one per connection (joined by the acceptor once its
 * client left); stop() closes the listener and every connection and joins
 * them.
 */
#pragma once

#include <atomic>
#include <list>
#include <mutex>
#include <string>
#include <thread>

#include "broker.hpp"

namespace kvs {

class SockServer {
public:
	/* Listens on path (replacing a stale socket file); throws Error. */
	SockServer(Broker &broker, const std::string &path);
	~SockServer();
	void stop();

private:
	struct Conn {
		int fd;
		bool done = false;	/* the client left; guarded by mu_ */
		std::thread thread;
	};

	void accept_loop();
	void reap();
	void serve(Conn *c);
	std::string answer(class Client &c, const std::string &line);

	Broker &broker_;
	std::string path_;
	int listen_fd_ = -1;
	int wake_[2] = {-1, -1};
	std::atomic<bool> stopping_{false};
	std::thread acceptor_;
	std::mutex mu_;			/* guards conns_ and Conn::done */
	std::list<Conn> conns_;		/* a list: serve() holds its element */
};

} // namespace kvs

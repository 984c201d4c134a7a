/*
 * server.cpp: construction, threads and shutdown of loggp-kvserver
 * (server.hpp).
 */
#include "server.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <netinet/in.h>
#include <sys/socket.h>
#include <system_error>
#include <unistd.h>

#include "ms_queue.hpp"
#include "mutex_queue.hpp"

namespace kvsrv {

namespace {

std::system_error sys_error(const std::string &what)
{
	return std::system_error(errno, std::generic_category(), what);
}

/* The log of opt, its records replayed into store; null without --log. */
std::unique_ptr<Wal> open_wal(const Options &opt, Store &store)
{
	if (opt.log.empty())
		return nullptr;
	auto wal = std::make_unique<Wal>(opt.log, opt.fsync, opt.fsync_interval);
	wal->replay([&store](char op, std::string_view key, std::string_view value) {
		if (op == Wal::put_op)
			store.put(key, value, nullptr);
		else
			store.del(key, nullptr);
	}, opt.recover);
	return wal;
}

} // namespace

Server::Server(const Options &opt)
	: opt_(opt), store_(make_store(opt.store, opt.shards)), wal_(open_wal(opt_, *store_)),
	  handler_(std::make_unique<Handler>(*store_, wal_.get(), metrics_, opt_,
					     [this] { return gauges(); })),
	  ctx_{*handler_, metrics_, opt_, stopping_}
{
	bool reuseport = opt_.queue == QueueKind::reuseport;
	if (opt_.queue == QueueKind::mutex)
		queue_ = std::make_unique<MutexQueue<std::shared_ptr<Conn>>>(opt_.queue_capacity);
	else if (opt_.queue == QueueKind::lockfree)
		queue_ = std::make_unique<MsQueue<std::shared_ptr<Conn>>>(opt_.queue_capacity);
	int nreactors = reuseport ? opt_.threads : 1;
	for (int i = 0; i < nreactors; i++) {
		int fd = listen_socket();
		Reactor::Dispatch dispatch;
		if (reuseport)
			dispatch = [this](const std::shared_ptr<Conn> &c) { conn_serve(c, ctx_); };
		else
			dispatch = [this](const std::shared_ptr<Conn> &c) { enqueue(c); };
		reactors_.push_back(std::make_unique<Reactor>(fd, std::move(dispatch), metrics_, opt_));
	}
}

Server::~Server()
{
	stop();
}

/* A non-blocking listener on opt_.bind:port_; the first picks port_ when 0. */
int Server::listen_socket()
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		throw sys_error("socket");
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (opt_.queue == QueueKind::reuseport &&
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0) {
		close(fd);
		throw sys_error("SO_REUSEPORT");
	}
	sockaddr_in addr{};
	addr.sin_family = AF_INET;
	addr.sin_port = htons(static_cast<uint16_t>(port_ ? port_ : opt_.port));
	if (inet_pton(AF_INET, opt_.bind.c_str(), &addr.sin_addr) != 1) {
		close(fd);
		errno = EINVAL;
		throw sys_error("--bind '" + opt_.bind + "' is not an IPv4 address");
	}
	if (bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) < 0 ||
	    listen(fd, opt_.backlog) < 0) {
		int err = errno;
		close(fd);
		errno = err;
		throw sys_error("cannot listen on " + opt_.bind + ":" +
				std::to_string(ntohs(addr.sin_port)));
	}
	socklen_t len = sizeof(addr);
	getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len);
	port_ = ntohs(addr.sin_port);
	return fd;
}

void Server::enqueue(const std::shared_ptr<Conn> &c)
{
	c->queued_at = Conn::Clock::now();
	if (!queue_->push(c)) {
		metrics_.queue_full.fetch_add(1, std::memory_order_relaxed);
		/* A reply cannot go behind another one half written. */
		if (conn_fresh(*c))
			conn_refuse(*c, metrics_, 503,
				    "every worker is busy and --queue-capacity is reached");
		else
			conn_close(*c, metrics_);
		return;
	}
	metrics_.note_depth(queue_->depth());
}

void Server::work()
{
	std::shared_ptr<Conn> c;
	while (queue_->pop(c)) {
		metrics_.queue_wait.record(Conn::Clock::now() - c->queued_at);
		conn_serve(c, ctx_);
		c.reset();
	}
}

void Server::start()
{
	for (auto &r : reactors_)
		reactor_threads_.emplace_back([this, reactor = r.get()] { reactor->run(stopping_); });
	if (queue_)
		for (int i = 0; i < opt_.threads; i++)
			workers_.emplace_back([this] { work(); });
}

void Server::stop()
{
	if (stopped_)
		return;
	stopped_ = true;
	stopping_.store(true, std::memory_order_release);
	for (auto &r : reactors_)
		r->wake();
	for (auto &t : reactor_threads_)
		t.join();
	if (queue_)
		queue_->close();
	for (auto &t : workers_)
		t.join();
	if (wal_)
		wal_->close();
}

Gauges Server::gauges()
{
	Gauges g;
	g.queue_depth = queue_ ? queue_->depth() : 0;
	g.keys = store_->size();
	if (wal_) {
		WalStats s = wal_->stats();
		g.wal_records = s.records;
		g.wal_fsyncs = s.fsyncs;
	}
	return g;
}

std::string Server::summary()
{
	std::string s = std::string("\"queue\": \"") + queue_name(opt_.queue) + "\", \"store\": \"" +
			store_name(opt_.store) + "\", \"threads\": " + std::to_string(opt_.threads) +
			", " + metrics_.json(gauges());
	if (wal_) {
		WalStats w = wal_->stats();
		s += ", \"fsync\": \"" + std::string(fsync_name(opt_.fsync)) +
		     "\", \"log_replayed\": " + std::to_string(w.replayed) +
		     ", \"log_torn_bytes\": " + std::to_string(w.torn_bytes) +
		     ", \"log_truncated_bytes\": " + std::to_string(w.truncated_bytes) +
		     ", \"log_skipped_bytes\": " + std::to_string(w.skipped_bytes);
	}
	return s;
}

} // namespace kvsrv

/*
 * server.cpp: the server loop and request dispatch (server.hpp).
 */
#include "server.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <tuple>

#include <nlohmann/json.hpp>

#include "common/calls.hpp"
#include "error.hpp"

namespace pfs {

void Server::check_range(uint64_t off, uint64_t len)
{
	if (off > kOffsetMax || len > kOffsetMax - off)
		throw Error(EFBIG, "range " + std::to_string(off) + "+" + std::to_string(len) +
					   " beyond the largest object offset 2^60");
}

void Server::check_unit(Op op, uint64_t off, uint64_t len)
{
	if (len > kReadMax)
		throw Error(EINVAL, std::string(op_name(op)) + " of " + std::to_string(len) +
					    " bytes: at most " + std::to_string(kReadMax));
	check_range(off, len);
}

Server::Server(const ServerConfig &cfg)
    : cfg_(cfg), fabric_(cfg.provider, cfg.index, cfg.ttl), store_(cfg.dir, cfg.capacity)
{
	if (cfg.index == 0)
		meta_ = std::make_unique<Meta>(cfg.dir + "/meta.db", cfg.servers);
	if (!cfg.metrics_host.empty())
		http_ = std::make_unique<svc::MetricsHttp>(cfg.metrics_host, cfg.metrics_port);
}

Server::~Server() = default;

void Server::run(const std::atomic<bool> &stop)
{
	auto msg_fn = [this](std::string &&f) { on_msg(std::move(f)); };
	auto err_fn = [this](uint32_t peer, const std::string &what) {
		std::fprintf(stderr, "pfs server %u: %s%s\n", cfg_.index,
			     peer == UINT32_MAX ? "" : ("peer " + std::to_string(peer) + ": ").c_str(),
			     what.c_str());
	};
	while (!stop) {
		bool busy = fabric_.progress(msg_fn, err_fn) > 0;
		if (http_)
			busy |= http_->poll([this] { return metrics(); });
		stats_.queue_max = std::max<uint64_t>(stats_.queue_max, queue_.size());
		while (!queue_.empty()) {
			stats_.queue_sum += queue_.size();
			std::string frame = std::move(queue_.front());
			queue_.pop_front();
			serve(frame);
			busy = true;
		}
		/* The stop flag is set from a signal handler: the wait's
		 * timeout bounds how long it goes unseen. */
		if (!busy)
			fabric_.wait(Clock::now() + svc::Fabric::kTimerCheck);
	}
	/* Last answers out, bounded. */
	auto until = Clock::now() + cfg_.ttl;
	while (fabric_.sends_pending() && Clock::now() < until) {
		fabric_.progress(msg_fn, err_fn);
		fabric_.wait(until);
	}
}

void Server::on_msg(std::string &&frame)
{
	queue_.push_back(std::move(frame));
}

void Server::refuse(const std::string &frame, const std::string &why)
{
	stats_.bad_requests++;
	std::fprintf(stderr, "pfs server %u: refused a request: %s\n", cfg_.index, why.c_str());
	try {
		Request h = request_header(frame);
		if (!peers_.count(h.client))
			return;
		Reply r;
		r.op = h.op;
		r.call = h.call;
		r.errnum = EPROTO;
		r.error = "pfs server " + std::to_string(cfg_.index) + ": " + why;
		reply(h.client, r);
	} catch (const Error &) {
		/* Not even a header: nobody to answer. */
	}
}

void Server::reply(uint32_t client, const Reply &r)
{
	fabric_.send(peers_.at(client), reply_encode(r));
}

void Server::serve(const std::string &frame)
{
	auto t0 = Clock::now();
	Request q;
	try {
		q = request_decode(frame);
	} catch (const Error &e) {
		refuse(frame, e.what());
		return;
	}
	Reply r;
	r.op = q.op;
	r.call = q.call;
	if (q.op == Op::HELLO) {
		hello(q, frame);
		return;
	}
	if (!peers_.count(q.client)) {
		refuse(frame, std::string(op_name(q.op)) + " from client " +
				      std::to_string(q.client) + ", which never said hello");
		return;
	}
	if (op_is_meta(q.op) && !meta_) {
		refuse(frame, std::string(op_name(q.op)) + " to server " +
				      std::to_string(cfg_.index) +
				      ", which is not the metadata server (server 0)");
		return;
	}
	stats_.requests++;
	if (q.rma && (q.op == Op::READ || q.op == Op::WRITE)) {
		bulk(q);	/* replies once its RMA op has completed */
	} else {
		try {
			r = op_is_meta(q.op) ? meta_op(q) : handle(q);
			r.op = q.op;
			r.call = q.call;
		} catch (const Error &e) {
			fail(r, e);
		}
		reply(q.client, r);
	}
	uint64_t ns = static_cast<uint64_t>(
		std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
	stats_.service_ns += ns;
	stats_.service_max_ns = std::max(stats_.service_max_ns, ns);
}

void Server::fail(Reply &r, const Error &e)
{
	stats_.errors++;
	r.errnum = e.errnum();
	r.error = "pfs server " + std::to_string(cfg_.index) + ": " + e.what();
}

void Server::hello(const Request &q, const std::string &frame)
{
	uint32_t peer;
	try {
		std::string addr(q.data);
		auto it = by_addr_.find(addr);
		peer = it != by_addr_.end() ? it->second : fabric_.add_peer(addr);
		by_addr_[addr] = peer;
	} catch (const Error &e) {
		refuse(frame, e.what());	/* no address to answer */
		return;
	}
	Reply r;
	r.op = q.op;
	r.call = q.call;
	try {
		uint32_t id = q.client;
		if (!id && !meta_)
			throw Error(EINVAL, "hello without a client id: server 0 hands them out");
		if (!id)
			id = meta_op(q).value;
		if (!peers_.count(id))
			stats_.clients++;
		peers_[id] = peer;
		r.value = id;
		r.index = cfg_.index;
		r.servers = cfg_.servers;
	} catch (const Error &e) {
		stats_.errors++;
		r.errnum = e.errnum();
		r.error = "pfs server " + std::to_string(cfg_.index) + " refused hello: " + e.what();
		std::fprintf(stderr, "%s\n", r.error.c_str());
	}
	stats_.requests++;
	fabric_.send(peer, reply_encode(r));
}

uint64_t Server::place_append(uint64_t ino, uint64_t size, uint64_t len)
{
	auto now = Clock::now();
	auto it = appends_.find(ino);
	if (it == appends_.end() && appends_.size() >= kAppendFiles) {
		for (auto e = appends_.begin(); e != appends_.end();)
			e = now - e->second.used > cfg_.ttl ? appends_.erase(e) : std::next(e);
		if (appends_.size() >= kAppendFiles)
			throw Error(EBUSY, "appends to " + std::to_string(kAppendFiles) +
						   " files in the last " + svc::seconds_text(cfg_.ttl) +
						   ": no room to place one more");
	}
	uint64_t off = size;
	if (it != appends_.end() && now - it->second.used <= cfg_.ttl)
		off = std::max(off, it->second.end);
	check_range(off, len);
	appends_[ino] = AppendEnd{off + len, now};
	stats_.appends++;
	return off;
}

Reply Server::handle(const Request &q)
{
	Reply r;
	switch (q.op) {
	case Op::STATS:
		r.data = stats();
		break;
	case Op::WRITE:
		check_range(q.offset, q.data.size());
		r.value = store_.write(q.ino, q.offset, q.data);
		stats_.writes++;
		stats_.bytes_written += q.data.size();
		break;
	case Op::READ:
		check_unit(q.op, q.offset, q.length);
		r.data = store_.read(q.ino, q.offset, q.length, &r.value);
		stats_.reads++;
		stats_.bytes_read += r.data.size();
		break;
	case Op::GETSIZE:
		r.value = store_.size(q.ino);
		std::tie(r.atime_ns, r.mtime_ns) = store_.times(q.ino);
		break;
	case Op::TRUNC:
		check_range(q.offset, 0);
		store_.truncate(q.ino, q.offset);
		appends_.erase(q.ino);
		break;
	case Op::DESTROY:
		store_.destroy(q.ino);
		appends_.erase(q.ino);
		break;
	case Op::APPEND:
		r.value = place_append(q.ino, q.offset, q.length);
		break;
	case Op::FALLOC:
		check_range(q.offset, q.length);
		r.value = store_.allocate(q.ino, q.offset, q.length);
		break;
	case Op::SETTIMES:
		store_.set_times(q.ino, q.atime_ns, q.mtime_ns);
		break;
	case Op::STATFS:
		r.fs = store_.fs_stat();
		break;
	case Op::FSYNC:
		store_.fsync(q.ino);
		break;
	default:
		throw Error(EINVAL, std::string("op ") + op_name(q.op) + " is not a data op");
	}
	return r;
}

Reply Server::meta_op(const Request &q)
{
	/* What may run on the reserve: what frees space or needs none for
	 * good, so a full disk can be emptied; creating stays ENOSPC. */
	bool frees = q.op == Op::UNLINK || q.op == Op::RMDIR || q.op == Op::RENAME ||
		     q.op == Op::SETATTR || q.op == Op::RMXATTR || q.op == Op::HELLO;
	Reply r;
	try {
		r = handle_meta(q);
	} catch (const Error &e) {
		if (e.errnum() != ENOSPC || !frees || !meta_->release_reserve()) {
			meta_->keep_reserve();
			throw;
		}
		stats_.reserve_used++;
		std::fprintf(stderr, "pfs server %u: %s: the disk is full: running it on the "
				     "metadata reserve\n", cfg_.index, op_name(q.op));
		r = handle_meta(q);
	}
	meta_->keep_reserve();
	return r;
}

Reply Server::handle_meta(const Request &q)
{
	Reply r;
	stats_.meta_ops++;
	Ids ids{q.uid, q.gid};
	switch (q.op) {
	case Op::HELLO:
		r.value = meta_->new_client();
		break;
	case Op::LOOKUP:
		r.attr = meta_->lookup(q.path, q.follow);
		break;
	case Op::CREATE:
		r.attr = meta_->create(q.path, q.mode, q.excl, q.stripe_size, q.stripe_count,
				       q.stripe_all, ids);
		break;
	case Op::MKDIR:
		r.attr = meta_->mkdir(q.path, q.mode, ids);
		break;
	case Op::MKNOD:
		r.attr = meta_->mknod(q.path, q.mode, q.rdev, ids);
		break;
	case Op::SYMLINK:
		r.attr = meta_->symlink(q.path2, q.path, ids);
		break;
	case Op::LINK:
		r.attr = meta_->link(q.path, q.path2);
		break;
	case Op::SETATTR:
		r.attr = meta_->setattr(q.path, q.ino, q.attrs);
		break;
	case Op::SETXATTR:
		meta_->setxattr(q.path, q.path2, q.data, q.flags);
		break;
	case Op::GETXATTR:
		r.data = meta_->getxattr(q.path, q.path2);
		break;
	case Op::LISTXATTR:
		r.data = meta_->listxattr(q.path);
		break;
	case Op::RMXATTR:
		meta_->removexattr(q.path, q.path2);
		break;
	case Op::RMDIR:
		meta_->rmdir(q.path);
		break;
	case Op::READDIR:
		r.entries = meta_->readdir(q.path);
		break;
	case Op::UNLINK:
		r.attr = meta_->unlink(q.path);
		break;
	case Op::RENAME:
		r.attr = meta_->rename(q.path, q.path2);
		break;
	case Op::SETSTRIPE:
		r.attr = meta_->setstripe(q.path, q.stripe_size, q.stripe_count, q.stripe_all);
		break;
	default:
		throw Error(EINVAL, std::string("op ") + op_name(q.op) + " is not a metadata op");
	}
	return r;
}

std::string Server::stats() const
{
	return counters().dump();
}

nlohmann::json Server::counters() const
{
	const svc::FabricStats &f = fabric_.stats();
	uint64_t served = std::max<uint64_t>(stats_.requests, 1);
	nlohmann::json j = {
		{"pfs_server", cfg_.index},
		{"requests", stats_.requests},
		{"reads", stats_.reads},
		{"writes", stats_.writes},
		{"bytes_read", stats_.bytes_read},
		{"bytes_written", stats_.bytes_written},
		{"meta_ops", stats_.meta_ops},
		{"errors", stats_.errors},
		{"bad_requests", stats_.bad_requests},
		{"clients", stats_.clients},
		{"appends", stats_.appends},
		{"reserve_used", stats_.reserve_used},
		{"queue_max", stats_.queue_max},
		{"queue_mean", double(stats_.queue_sum) / double(served)},
		{"service_us_mean", double(stats_.service_ns) / 1e3 / double(served)},
		{"service_us_max", double(stats_.service_max_ns) / 1e3},
		{"objects", store_.objects()},
		{"used_bytes", store_.used()},
		{"capacity", store_.capacity()},
		{"msgs_sent", f.msgs_sent},
		{"bytes_sent", f.bytes_sent},
		{"msgs_recvd", f.msgs_recvd},
		{"bytes_recvd", f.bytes_recvd},
		{"send_errors", f.send_errors},
		{"fabric_waits", f.waits},
		{"fabric_wait_seconds", double(f.wait_ns) / 1e9},
		{"fabric_missed_wakeups", f.missed_wakeups},
		{"fabric_spins", f.spins},
		{"rma_ops", f.rma_ops},
		{"rma_bytes", f.rma_bytes},
	};
	return j;
}

std::string Server::metrics() const
{
	/* Levels, not totals: everything else only ever grows. */
	static const char *const gauges[] = {"capacity", "clients", "objects", "queue_max",
					     "queue_mean", "service_us_max", "service_us_mean",
					     "used_bytes"};
	std::string labels = "server=\"" + std::to_string(cfg_.index) + "\"", out;
	const nlohmann::json all = counters();
	for (auto it = all.begin(); it != all.end(); ++it) {
		const std::string &key = it.key();
		if (key == "pfs_server")
			continue;
		bool gauge = std::find(std::begin(gauges), std::end(gauges), key) != std::end(gauges);
		std::string name = "pfs_server_" + key + (gauge ? "" : "_total");
		out += svc::prom_metric(name, gauge ? "gauge" : "counter",
					"loggp-pfs-server's " + key + " (services/pfs/README.md)", labels,
					it.value().get<double>());
	}
	return out;
}

} // namespace pfs

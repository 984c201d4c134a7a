/*
 * client.cpp: the client's progress thread, per-server queues, connecting
 * and blocking calls (client.hpp).  The striped data path is client_io.cpp.
 */
#include "client.hpp"

#include <cerrno>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <future>

#include "common/options.hpp"
#include "common/spin.hpp"
#include "error.hpp"
#include "instance.hpp"

namespace pfs {

Client::Client(const ClientConfig &cfg)
    : cfg_(cfg),
      fabric_(cfg.provider.empty() ? svc::default_provider() : cfg.provider, 0, cfg.timeout)
{
	cfg_.provider = fabric_.provider();
	if (cfg_.max_inflight < 1)
		throw Error(EINVAL, "max_inflight 0: expected 1 or more requests per server");
	my_addr_ = fabric_.address();
	srv_.resize(1);
	thread_ = std::thread([this] { run(); });
	try {
		/* Server 0 hands out the id and the count (the progress thread
		 * sets id_ and nservers_ before it answers); then the others. */
		Request hello;
		hello.op = Op::HELLO;
		call(0, hello);
		std::vector<std::future<Reply>> rest;
		for (uint32_t s = 1; s < nservers_; s++) {
			auto p = std::make_shared<std::promise<Reply>>();
			rest.push_back(p->get_future());
			submit(s, hello, [p](Reply &&rep) { p->set_value(std::move(rep)); });
		}
		for (auto &f : rest) {
			Reply rep = f.get();
			if (rep.errnum)
				throw Error(rep.errnum, rep.error);
		}
	} catch (...) {
		stopping_ = true;
		fabric_.wake();
		thread_.join();
		throw;
	}
}

Client::~Client()
{
	stop();
}

void Client::stop()
{
	stopping_ = true;
	fabric_.wake();
	if (thread_.joinable())
		thread_.join();
}

std::string Client::addr_file(uint32_t s) const
{
	return addr_path(cfg_.instance, s);
}

std::string Client::server_name(uint32_t s) const
{
	return "pfs server " + std::to_string(s);
}

std::string Client::silent(uint32_t s) const
{
	return server_name(s) + " (" + addr_file(s) + ") did not answer within " +
	       svc::seconds_text(cfg_.timeout);
}

Reply Client::io_error(const Rpc &rpc, const std::string &what)
{
	Reply r;
	r.op = rpc.q.op;
	r.errnum = EIO;
	r.error = what;
	return r;
}

Reply Client::closed_error(const Rpc &rpc)
{
	Reply r = io_error(rpc, "pfs client closed");
	r.errnum = ESHUTDOWN;
	return r;
}

void Client::submit(uint32_t server, Request q, std::function<void(Reply &&)> done, char *bulk)
{
	Rpc rpc{server, std::move(q), Clock::now() + cfg_.timeout, std::move(done), bulk};
	bool queued = false;
	{
		std::lock_guard lk(mu_);
		if (!closed_) {
			incoming_.push_back(std::move(rpc));
			queued = true;
		}
	}
	if (queued) {
		fabric_.wake();
		return;
	}
	/* No progress thread to answer it: it fails here, after every request
	 * the thread took has (closed_ is set last, under mu_). */
	rpc.done(closed_error(rpc));
}

Reply Client::call(uint32_t server, Request q)
{
	auto p = std::make_shared<std::promise<Reply>>();
	auto fut = p->get_future();
	Op op = q.op;
	submit(server, std::move(q), [p](Reply &&r) { p->set_value(std::move(r)); });
	if (svc::await_answer(fut, cfg_.timeout + svc::kCallerGrace) != std::future_status::ready)
		throw Error(EIO, server_name(server) + ": " + op_name(op) +
					 ": the client's progress thread did not answer within " +
					 svc::seconds_text(cfg_.timeout + svc::kCallerGrace));
	Reply r = fut.get();
	if (r.errnum)
		throw Error(r.errnum, r.error);
	return r;
}

void Client::run()
{
	auto msg_fn = [this](std::string &&f) { on_msg(std::move(f)); };
	auto err_fn = [this](uint32_t p, const std::string &w) { on_fabric_error(p, w); };
	while (!stopping_) {
		bool busy = fabric_.progress(msg_fn, err_fn) > 0;
		{
			std::lock_guard lk(mu_);
			busy |= !incoming_.empty();
		}
		take_incoming();
		auto now = Clock::now();
		calls_.expire(now, [this](uint32_t s) {
			/* The reply may never come: connect afresh next time. */
			if (srv_[s].state == State::UP)
				srv_[s].state = State::DOWN;
			return silent(s);
		});
		for (uint32_t s = 0; s < srv_.size(); s++) {
			auto &q = srv_[s].queue;
			while (!q.empty() && q.front().deadline <= now) {
				Rpc rpc = std::move(q.front());
				q.pop_front();
				rpc.done(io_error(rpc, silent(s) + " (request queued)"));
			}
			dispatch(s);
		}
		/* A submitted request ends the wait at once (fabric_.wake()). */
		if (!busy)
			fabric_.wait(now + svc::Fabric::kTimerCheck);
	}
	/* Flush what is in flight (bounded), then fail what is left. */
	auto until = Clock::now() + cfg_.timeout;
	while (fabric_.sends_pending() && Clock::now() < until) {
		fabric_.progress(msg_fn, err_fn);
		fabric_.wait(until);
	}
	take_incoming();
	calls_.fail_all(ESHUTDOWN, "pfs client closed");
	for (auto &s : srv_)
		for (auto &rpc : s.queue)
			rpc.done(closed_error(rpc));
	for (;;) {
		std::deque<Rpc> late;
		{
			std::lock_guard lk(mu_);
			if (incoming_.empty()) {
				closed_ = true;
				break;
			}
			late.swap(incoming_);
		}
		for (auto &rpc : late)
			rpc.done(closed_error(rpc));
	}
}

void Client::take_incoming()
{
	std::deque<Rpc> batch;
	{
		std::lock_guard lk(mu_);
		batch.swap(incoming_);
	}
	for (auto &rpc : batch) {
		if (rpc.server >= srv_.size()) {
			rpc.done(io_error(rpc, "no pfs server " + std::to_string(rpc.server) +
						       " (the instance has " +
						       std::to_string(srv_.size()) + ")"));
			continue;
		}
		srv_[rpc.server].queue.push_back(std::move(rpc));
	}
}

void Client::dispatch(uint32_t s)
{
	Server &sv = srv_[s];
	if (sv.queue.empty())
		return;
	if (sv.state == State::DOWN) {
		connect(s);
		return;
	}
	if (sv.state != State::UP)
		return;
	while (!sv.queue.empty() && calls_.inflight(s) < cfg_.max_inflight) {
		Rpc rpc = std::move(sv.queue.front());
		sv.queue.pop_front();
		if (rpc.q.op == Op::HELLO) {
			/* A caller's hello waits only for the connection. */
			Reply r;
			r.op = Op::HELLO;
			r.value = id_;
			r.index = s;
			r.servers = nservers_;
			rpc.done(std::move(r));
			continue;
		}
		send_rpc(std::move(rpc));
	}
}

std::shared_ptr<Client::Staged> Client::stage_bulk(Rpc &rpc)
{
	Request &q = rpc.q;
	bool read = q.op == Op::READ;
	size_t len = read ? q.length : q.data.size();
	if (!rpc.bulk || !fabric_.has_rma() || len <= svc::Fabric::kCtrlMax)
		return nullptr;
	auto st = std::make_shared<Staged>();
	st->buf.reset(new char[len]);
	svc::Remote at;
	try {
		st->id = fabric_.expose(st->buf.get(), len, read, &at);
	} catch (const Error &e) {
		std::fprintf(stderr, "pfs client %u: %s: the data goes in messages\n", id_, e.what());
		return nullptr;
	}
	q.rma = true;
	q.rma_addr = at.addr;
	q.rma_key = at.key;
	if (!read) {
		std::memcpy(st->buf.get(), q.data.data(), len);
		q.length = len;
		q.data = std::string_view();
	}
	return st;
}

void Client::send_rpc(Rpc &&rpc)
{
	uint32_t s = rpc.server;
	std::shared_ptr<Staged> staged = stage_bulk(rpc);
	auto shared = std::make_shared<Rpc>(std::move(rpc));
	uint64_t call = calls_.add(
		s, shared->deadline,
		[this, shared, staged](int err, const std::string &what, std::string &&rep) {
			Reply r;
			if (err) {
				r = io_error(*shared, what);
			} else {
				try {
					r = reply_decode(rep);
				} catch (const Error &e) {
					r = io_error(*shared, server_name(shared->server) +
								      ": bad reply: " + e.what());
				}
			}
			if (staged && r.errnum) {
				/* No reply, or one that gave up: the server's op
				 * may still reach the buffer. */
				kept_.push_back(staged);
			} else if (staged) {
				if (shared->q.op == Op::READ)
					std::memcpy(shared->bulk, staged->buf.get(),
						    std::min<uint64_t>(r.placed, shared->q.length));
				fabric_.unexpose(staged->id);
			}
			shared->done(std::move(r));
		});
	shared->q.client = id_;
	shared->q.call = call;
	try {
		fabric_.send(srv_[s].peer, request_encode(shared->q));
	} catch (const Error &e) {
		server_failed(s, server_name(s) + ": " + e.what());
	}
}

void Client::connect(uint32_t s)
{
	Server &sv = srv_[s];
	std::optional<std::string> found = addr_read(cfg_.instance, s);
	if (!found) {
		server_failed(s, server_name(s) + ": no address in " + addr_file(s) +
					 " (is it running?)");
		return;
	}
	const std::string &addr = *found;
	try {
		if (addr != sv.addr || sv.peer == UINT32_MAX) {
			sv.peer = fabric_.add_peer(addr);
			sv.addr = addr;
		}
	} catch (const Error &e) {
		server_failed(s, server_name(s) + ": " + e.what());
		return;
	}
	sv.state = State::CONNECTING;
	Rpc hello;
	hello.server = s;
	hello.q.op = Op::HELLO;
	hello.q.data = my_addr_;
	hello.deadline = Clock::now() + cfg_.timeout;
	hello.done = [this, s](Reply &&r) {
		if (r.errnum) {
			server_failed(s, r.error);
			return;
		}
		if (s == 0 && !id_) {
			id_ = static_cast<uint32_t>(r.value);
			fabric_.set_self(id_);
			nservers_ = r.servers;
			srv_.resize(std::max<size_t>(r.servers, 1));
		} else if (r.servers != nservers_ || r.index != s) {
			server_failed(s, server_name(s) + " (" + addr_file(s) + ") says it is server " +
						 std::to_string(r.index) + " of " +
						 std::to_string(r.servers) + ", not " +
						 std::to_string(s) + " of " + std::to_string(nservers_));
			return;
		}
		srv_[s].state = State::UP;
		dispatch(s);
	};
	send_rpc(std::move(hello));
}

void Client::server_failed(uint32_t s, const std::string &why)
{
	Server &sv = srv_[s];
	sv.state = State::DOWN;
	if (sv.peer != UINT32_MAX)
		fabric_.drop_queued(sv.peer);
	calls_.fail_peer(s, EIO, why);
	std::deque<Rpc> q;
	q.swap(srv_[s].queue);
	for (auto &rpc : q)
		rpc.done(io_error(rpc, why));
}

void Client::on_msg(std::string &&frame)
{
	try {
		uint64_t call = reply_call(frame);
		calls_.answer(call, std::move(frame));
	} catch (const Error &e) {
		std::fprintf(stderr, "pfs client %u: dropped a reply: %s\n", id_, e.what());
	}
}

void Client::on_fabric_error(uint32_t peer, const std::string &what)
{
	/* A send that failed fails its server; a reply dropped on receipt
	 * (peer UINT32_MAX) leaves its call to time out. */
	for (uint32_t s = 0; s < srv_.size(); s++)
		if (srv_[s].peer == peer && peer != UINT32_MAX) {
			server_failed(s, server_name(s) + " (" + addr_file(s) + "): " + what);
			return;
		}
	std::fprintf(stderr, "pfs client %u: %s\n", id_, what.c_str());
}

/* The namespace. */

namespace {

Request at(Op op, const std::string &path)
{
	Request q;
	q.op = op;
	q.path = path;
	return q;
}

} // namespace

Attr Client::lookup(const std::string &path, bool follow)
{
	Request q = at(Op::LOOKUP, path);
	q.follow = follow;
	return meta(std::move(q)).attr;
}

Attr Client::create(const std::string &path, uint32_t mode, bool excl, uint64_t stripe_size,
		    uint32_t stripe_count, bool all, Ids ids)
{
	Request q = at(Op::CREATE, path);
	q.mode = mode;
	q.excl = excl;
	q.stripe_size = stripe_size;
	q.stripe_count = stripe_count;
	q.stripe_all = all;
	q.uid = ids.uid;
	q.gid = ids.gid;
	return meta(std::move(q)).attr;
}

Attr Client::mkdir(const std::string &path, uint32_t mode, Ids ids)
{
	Request q = at(Op::MKDIR, path);
	q.mode = mode;
	q.uid = ids.uid;
	q.gid = ids.gid;
	return meta(std::move(q)).attr;
}

Attr Client::mknod(const std::string &path, uint32_t mode, uint64_t rdev, Ids ids)
{
	Request q = at(Op::MKNOD, path);
	q.mode = mode;
	q.rdev = rdev;
	q.uid = ids.uid;
	q.gid = ids.gid;
	return meta(std::move(q)).attr;
}

Attr Client::symlink(const std::string &target, const std::string &path, Ids ids)
{
	Request q = at(Op::SYMLINK, path);
	q.path2 = target;
	q.uid = ids.uid;
	q.gid = ids.gid;
	return meta(std::move(q)).attr;
}

Attr Client::link(const std::string &from, const std::string &to)
{
	Request q = at(Op::LINK, from);
	q.path2 = to;
	return meta(std::move(q)).attr;
}

Attr Client::setattr(const std::string &path, const Attr &file, const SetAttr &s)
{
	Request q = at(Op::SETATTR, path);
	q.ino = file.ino;
	q.attrs = s;
	Attr a = meta(std::move(q)).attr;
	if (a.type == Type::REG && (s.set & (kSetAtime | kSetMtime)))
		each_object(a, Op::SETTIMES,
			    [&](uint32_t, Request &o) {
				    o.atime_ns = s.set & kSetAtime ? s.atime_ns : kOmit;
				    o.mtime_ns = s.set & kSetMtime ? s.mtime_ns : kOmit;
			    },
			    nullptr);
	return a;
}

void Client::setxattr(const std::string &path, const std::string &name, std::string_view value,
		      uint32_t flags)
{
	Request q = at(Op::SETXATTR, path);
	q.path2 = name;
	q.data = value;
	q.flags = flags;
	meta(std::move(q));
}

std::string Client::getxattr(const std::string &path, const std::string &name)
{
	Request q = at(Op::GETXATTR, path);
	q.path2 = name;
	return meta(std::move(q)).data;
}

std::string Client::listxattr(const std::string &path)
{
	return meta(at(Op::LISTXATTR, path)).data;
}

void Client::removexattr(const std::string &path, const std::string &name)
{
	Request q = at(Op::RMXATTR, path);
	q.path2 = name;
	meta(std::move(q));
}

void Client::rmdir(const std::string &path)
{
	meta(at(Op::RMDIR, path));
}

std::vector<Dirent> Client::readdir(const std::string &path)
{
	return meta(at(Op::READDIR, path)).entries;
}

void Client::unlink(const std::string &path)
{
	Attr gone = meta(at(Op::UNLINK, path)).attr;
	if (gone.type == Type::REG && gone.nlink == 0)
		destroy(gone);
}

void Client::rename(const std::string &from, const std::string &to)
{
	Request q = at(Op::RENAME, from);
	q.path2 = to;
	Attr replaced = meta(std::move(q)).attr;
	if (replaced.ino && replaced.type == Type::REG && replaced.nlink == 0)
		destroy(replaced);
}

Attr Client::setstripe(const std::string &path, uint64_t stripe_size, uint32_t stripe_count,
		       bool all)
{
	Request q = at(Op::SETSTRIPE, path);
	q.stripe_size = stripe_size;
	q.stripe_count = stripe_count;
	q.stripe_all = all;
	return meta(std::move(q)).attr;
}

std::string Client::stats(uint32_t server)
{
	Request q;
	q.op = Op::STATS;
	return call(server, std::move(q)).data;
}

} // namespace pfs

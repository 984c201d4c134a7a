/*
 * broker.cpp: the broker thread, its request queue and timers (broker.hpp).
 * The fence protocol is in broker_fence.cpp, lookups and fault-in in
 * broker_lookup.cpp.
 */
#include "broker.hpp"

#include <cerrno>
#include <algorithm>
#include <cstdio>

#include "common/calls.hpp"
#include "common/spin.hpp"
#include "error.hpp"

namespace kvs {

Broker::Broker(const Config &cfg, uint32_t rank, uint32_t size)
    : cfg_(cfg), rank_(rank), size_(size), fabric_(cfg.provider, rank, cfg.timeout),
      store_(rank == 0 ? cfg.sqlite : std::string())
{
	if (cfg.fanout < 1)
		throw Error(EINVAL, "fanout 0: expected 1 or more children per broker");
	for (uint64_t c = uint64_t(rank) * cfg.fanout + 1;
	     c <= uint64_t(rank) * cfg.fanout + cfg.fanout && c < size; c++)
		children_.push_back(static_cast<uint32_t>(c));
	/* Subtree size by walking the complete fanout-ary tree level by level. */
	subtree_ = 0;
	for (uint64_t lo = rank, hi = rank; lo < size;
	     lo = lo * cfg.fanout + 1, hi = hi * cfg.fanout + cfg.fanout)
		subtree_ += static_cast<uint32_t>(std::min<uint64_t>(hi, size - 1) - lo + 1);
	if (rank == 0) {
		if (auto r = store_.root()) {
			root_ = *r;
		} else {
			root_ = {0, empty_root(store_)};
			store_.set_root(root_);
		}
		root_known_ = true;
	}
	stats_.version = root_.version;
}

Broker::~Broker()
{
	stop();
}

void Broker::start(const std::vector<std::string> &addrs)
{
	if (addrs.size() != size_)
		throw Error(EINVAL, "start: " + std::to_string(addrs.size()) +
					    " addresses for " + std::to_string(size_) + " brokers");
	fabric_.set_peers(addrs);
	if (rank_ == 0)
		publish_root({});
	running_ = true;
	thread_ = std::thread([this] { run(); });
}

void Broker::stop()
{
	if (!thread_.joinable())
		return;
	{
		std::lock_guard lk(mu_);
		stopping_ = true;
	}
	fabric_.wake();
	thread_.join();
	running_ = false;
}

void Broker::send(uint32_t peer, const Msg &m)
{
	fabric_.send(peer, msg_encode(m));
}

void Broker::run()
{
	auto msg_fn = [this](std::string &&b) { on_msg(std::move(b)); };
	auto err_fn = [this](uint32_t p, const std::string &w) { on_fabric_error(p, w); };
	try {
		while (!stopping_) {
			bool busy = fabric_.progress(msg_fn, err_fn) > 0;
			busy |= take_requests();
			check_timers();
			/* A client request ends the wait at once (fabric_.wake()). */
			if (!busy)
				fabric_.wait(Clock::now() + svc::Fabric::kTimerCheck);
		}
		/* Flush what is in flight so peers get their last answers. */
		auto until = Clock::now() + cfg_.timeout;
		while (fabric_.sends_pending() && Clock::now() < until) {
			fabric_.progress(msg_fn, err_fn);
			fabric_.wait(until);
		}
	} catch (const std::exception &e) {
		std::fprintf(stderr, "kvs broker %u: %s\n", rank_, e.what());
		std::lock_guard lk(mu_);
		thread_error_ = e.what();
	}
	/* Nobody is left to answer: fail every request still waiting.  A
	 * request may wait in two places (a fence and a load); answered makes
	 * the second answer a no-op. */
	std::string why = thread_error_.empty() ? "broker stopped" : thread_error_;
	{
		std::deque<ReqPtr> left;
		std::lock_guard lk(mu_);
		left.swap(incoming_);
		for (auto &r : left)
			fail(r, ESHUTDOWN, why);
	}
	for (auto &[n, r] : fence_waiters_)
		fail(r, ESHUTDOWN, "fence '" + n + "': " + why);
	for (auto &[ref, l] : loads_)
		for (auto &r : l.waiters)
			fail(r, ESHUTDOWN, "get '" + r->key + "': " + why);
	for (auto &r : version_waiters_)
		fail(r, ESHUTDOWN, why);
	fence_waiters_.clear();
	loads_.clear();
	version_waiters_.clear();
}

Reply Broker::call(ReqPtr req)
{
	req->deadline = Clock::now() + cfg_.timeout;
	auto fut = req->done.get_future();
	{
		std::lock_guard lk(mu_);
		if (!running_ || stopping_ || !thread_error_.empty())
			throw Error(ESHUTDOWN, "kvs broker " + std::to_string(rank_) +
						       " is not running" +
						       (thread_error_.empty() ? "" : ": " + thread_error_));
		incoming_.push_back(req);
	}
	fabric_.wake();
	if (svc::await_answer(fut, cfg_.timeout + svc::kCallerGrace) != std::future_status::ready)
		throw Error(ETIMEDOUT, "kvs broker " + std::to_string(rank_) +
					       " did not answer within " +
					       svc::seconds_text(cfg_.timeout + svc::kCallerGrace));
	Reply r = fut.get();
	if (r.errnum)
		throw Error(r.errnum, r.error);
	return r;
}

bool Broker::take_requests()
{
	std::deque<ReqPtr> batch;
	{
		std::lock_guard lk(mu_);
		batch.swap(incoming_);
	}
	for (auto &req : batch)
		handle(std::move(req));
	return !batch.empty();
}

void Broker::handle(ReqPtr req)
{
	switch (req->kind) {
	case ReqKind::FENCE: {
		FenceBatch b;
		b.name = req->key;
		b.nprocs = req->nprocs;
		b.count = 1;
		b.ops_in = req->ops.size();
		b.ops = std::move(req->ops);
		req->waiting_for = "fence '" + req->key + "'";
		fence_waiters_.emplace(req->key, req);
		stats_.fences_joined++;
		fence_join(std::move(b));
		return;
	}
	case ReqKind::GET:
	case ReqKind::LS:
		stats_.gets += req->kind == ReqKind::GET;
		[[fallthrough]];
	case ReqKind::WAIT:
	case ReqKind::CONNECT:
		if (!root_known_ || root_.version < req->min_version) {
			req->waiting_for = root_known_ ?
				"root version " + std::to_string(req->min_version) +
					" (have " + std::to_string(root_.version) + ")" :
				"the first root from the root broker";
			version_waiters_.push_back(req);
			return;
		}
		if (req->kind == ReqKind::WAIT || (req->kind == ReqKind::CONNECT && rank_ == 0)) {
			Reply r;
			r.version = root_.version;
			finish(req, std::move(r));
			return;
		}
		if (req->kind == ReqKind::CONNECT) {
			/* The parent answers a load of the root object it sent us. */
			req->key = "(connect)";
			load_request(root_.ref, req, -1);
			return;
		}
		req->root_ref = root_.ref;
		lookup_run(req);
		return;
	case ReqKind::STATS: {
		Reply r;
		r.version = root_.version;
		r.stats = stats_;
		r.stats.version = root_.version;
		r.stats.version_waiters = version_waiters_.size();
		r.stats.fabric = fabric_.stats();
		r.stats.cache_objects = store_.count();
		r.stats.cache_bytes = store_.bytes();
		r.stats.cache_expired = store_.expired();
		finish(req, std::move(r));
		return;
	}
	}
}

void Broker::finish(const ReqPtr &req, Reply r)
{
	if (req->answered)
		return;
	req->answered = true;
	req->done.set_value(std::move(r));
}

void Broker::fail(const ReqPtr &req, int errnum, const std::string &what)
{
	Reply r;
	r.errnum = errnum;
	r.error = what;
	finish(req, std::move(r));
}

void Broker::cache_tick()
{
	store_.tick();
	if (cfg_.cache_expire.count() > 0 && (rank_ != 0 || store_.persistent()))
		store_.expire(static_cast<uint64_t>(cfg_.cache_expire.count()));
}

void Broker::check_timers()
{
	auto now = Clock::now();
	if (now >= next_tick_) {
		next_tick_ = now + std::chrono::seconds(1);
		cache_tick();
	}
	for (auto it = fences_.begin(); it != fences_.end();) {
		auto next = std::next(it);
		if (rank_ != 0 && now - it->second.first >= cfg_.fence_hold) {
			fence_maybe_forward(it->first, true);
		} else if (rank_ == 0 && now - it->second.first >= cfg_.timeout * 9 / 10) {
			/* Participants that never came: end the fence everywhere,
			 * so a later fence of the same name starts afresh.  The
			 * root gives up a little before the participants' own
			 * deadlines, so once one reports the timeout the fence is
			 * gone and cannot absorb a later one of the same name. */
			const FenceBatch &b = it->second.merger->batch();
			std::string name = it->first;
			Error e(ETIMEDOUT, std::to_string(b.count) + " of " +
						   std::to_string(b.nprocs) +
						   " participants joined within " + svc::seconds_text(cfg_.timeout));
			fences_.erase(it);
			fence_fail(name, e);
		}
		it = next;
	}
	std::string parent = rank_ ? "broker " + std::to_string((rank_ - 1) / cfg_.fanout) :
				     "";
	for (auto it = fence_waiters_.begin(); it != fence_waiters_.end();) {
		if (now < it->second->deadline) {
			++it;
			continue;
		}
		fail(it->second, ETIMEDOUT,
		     "fence '" + it->first + "': no new root within " + svc::seconds_text(cfg_.timeout) +
			     (rank_ ? " (participants missing, or " + parent + " or the root"
					      " broker is not answering); its outcome is unknown:"
					      " the root may still apply it" :
				      " (participants missing)"));
		it = fence_waiters_.erase(it);
	}
	auto no_answer = [&](const std::string &ref) {
		return "no answer from " + parent + " (parent of broker " + std::to_string(rank_) +
		       ") for object " + ref + " within " + svc::seconds_text(cfg_.timeout);
	};
	for (auto it = loads_.begin(); it != loads_.end();) {
		if (now < it->second.deadline) {
			/* A get that first waited for a root version reaches its
			 * own deadline before the load's: it ends there, and the
			 * load goes on for whoever else needs the object. */
			std::erase_if(it->second.waiters, [&](const ReqPtr &r) {
				if (now < r->deadline)
					return false;
				fail(r, ETIMEDOUT,
				     "get '" + r->key + "': " + no_answer(it->first) + " of the request");
				return true;
			});
			++it;
			continue;
		}
		std::string what = no_answer(it->first);
		for (auto &r : it->second.waiters)
			fail(r, ETIMEDOUT, "get '" + r->key + "': " + what);
		for (uint32_t c : it->second.children) {
			Msg m;
			m.type = MsgType::LOAD_REPLY;
			m.src = rank_;
			m.ref = it->first;
			m.errnum = ETIMEDOUT;
			m.error = what;
			send(c, m);
		}
		it = loads_.erase(it);
	}
	for (auto it = version_waiters_.begin(); it != version_waiters_.end();) {
		if (now < (*it)->deadline) {
			++it;
			continue;
		}
		fail(*it, ETIMEDOUT, "waited " + svc::seconds_text(cfg_.timeout) + " for " +
					     (*it)->waiting_for);
		it = version_waiters_.erase(it);
	}
}

void Broker::on_msg(std::string &&bytes)
{
	try {
		Msg m = msg_decode(bytes);
		bool up = m.type == MsgType::FENCE || m.type == MsgType::LOAD;
		bool from_child = m.src > 0 && m.src < size_ && (m.src - 1) / cfg_.fanout == rank_;
		bool from_parent = rank_ > 0 && m.src == (rank_ - 1) / cfg_.fanout;
		if (up ? !from_child : !from_parent)
			throw Error(EPROTO, std::string(msg_type_name(m.type)) + " from broker " +
						    std::to_string(m.src) + ", which is not " +
						    (up ? "a child" : "the parent") + " of this one");
		switch (m.type) {
		case MsgType::FENCE: on_fence(m); break;
		case MsgType::SETROOT: on_setroot(m); break;
		case MsgType::FENCE_ERR: on_fence_error(m); break;
		case MsgType::LOAD: on_load(m); break;
		case MsgType::LOAD_REPLY: on_load_reply(m); break;
		}
	} catch (const Error &e) {
		/* A malformed message must not stop this broker; whoever waits
		 * for its effect times out with a message of its own. */
		std::fprintf(stderr, "kvs broker %u: dropped a message: %s\n", rank_, e.what());
	}
}

void Broker::on_fabric_error(uint32_t peer, const std::string &what)
{
	std::fprintf(stderr, "kvs broker %u: %s%s\n", rank_,
		     peer == UINT32_MAX ? "" : ("to broker " + std::to_string(peer) + ": ").c_str(),
		     what.c_str());
}

uint64_t Broker::fence(const std::string &name, uint32_t nprocs, std::vector<Op> ops)
{
	if (name.empty())
		throw Error(EINVAL, "fence: empty name (expected a name all participants share)");
	if (nprocs < 1)
		throw Error(EINVAL, "fence '" + name + "': nprocs 0 (expected 1 or more)");
	auto req = std::make_shared<Request>();
	req->kind = ReqKind::FENCE;
	req->key = name;
	req->nprocs = nprocs;
	req->ops = std::move(ops);
	return call(req).version;
}

std::string Broker::get(const std::string &key, uint64_t min_version)
{
	auto req = std::make_shared<Request>();
	req->kind = ReqKind::GET;
	req->key = key;
	req->min_version = min_version;
	return call(req).value;
}

Directory Broker::ls(const std::string &dir, uint64_t min_version)
{
	auto req = std::make_shared<Request>();
	req->kind = ReqKind::LS;
	req->key = dir;
	req->min_version = min_version;
	return call(req).dir;
}

uint64_t Broker::wait_version(uint64_t v)
{
	auto req = std::make_shared<Request>();
	req->kind = ReqKind::WAIT;
	req->min_version = v;
	return call(req).version;
}

void Broker::connect()
{
	auto req = std::make_shared<Request>();
	req->kind = ReqKind::CONNECT;
	call(req);
}

BrokerStats Broker::stats()
{
	auto req = std::make_shared<Request>();
	req->kind = ReqKind::STATS;
	return call(req).stats;
}

} // namespace kvs

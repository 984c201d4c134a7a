/*
 * broker_lookup.cpp: gets and listings against the local cache, and the
 * fault-in of missing objects from the parent (broker.hpp, "Protocol").
 */
#include <cerrno>

#include "broker.hpp"
#include "error.hpp"
#include "lookup.hpp"

namespace kvs {

void Broker::lookup_run(const ReqPtr &req)
{
	try {
		Reply r;
		r.version = root_.version;
		if (req->kind == ReqKind::GET) {
			Lookup l = lookup(store_, req->root_ref, req->key);
			if (l.status == Lookup::Status::MISSING_OBJECT) {
				load_request(l.missing_ref, req, -1);
				return;
			}
			r.value = std::move(l.value);
		} else {
			Listing l = lookup_dir(store_, req->root_ref, req->key);
			if (l.status == Listing::Status::MISSING_OBJECT) {
				load_request(l.missing_ref, req, -1);
				return;
			}
			r.dir = std::move(l.dir);
		}
		finish(req, std::move(r));
	} catch (const Error &e) {
		fail(req, e.errnum(), e.what());
	}
}

void Broker::load_request(const std::string &ref, const ReqPtr &waiter, int child)
{
	if (rank_ == 0) {
		/* The root holds every object of every root it published, in
		 * memory or in its file (it expires nothing else). */
		std::string what = "dangling reference " + ref + " at the root broker";
		if (waiter)
			fail(waiter, ENOENT, "get '" + waiter->key + "': " + what);
		if (child >= 0) {
			Msg m;
			m.type = MsgType::LOAD_REPLY;
			m.src = rank_;
			m.ref = ref;
			m.errnum = ENOENT;
			m.error = what;
			send(static_cast<uint32_t>(child), m);
		}
		return;
	}
	auto [it, fresh] = loads_.try_emplace(ref);
	if (waiter)
		it->second.waiters.push_back(waiter);
	if (child >= 0)
		it->second.children.push_back(static_cast<uint32_t>(child));
	if (!fresh)
		return;
	it->second.deadline = Clock::now() + cfg_.timeout;
	Msg m;
	m.type = MsgType::LOAD;
	m.src = rank_;
	m.ref = ref;
	stats_.loads_sent++;
	send((rank_ - 1) / cfg_.fanout, m);
}

void Broker::on_load(Msg &m)
{
	if (const std::string *data = store_.find(m.ref)) {
		Msg r;
		r.type = MsgType::LOAD_REPLY;
		r.src = rank_;
		r.ref = m.ref;
		r.data = *data;
		stats_.loads_served++;
		send(m.src, r);
		return;
	}
	load_request(m.ref, nullptr, static_cast<int>(m.src));
}

void Broker::on_load_reply(Msg &m)
{
	auto it = loads_.find(m.ref);
	if (it == loads_.end())
		return;		/* timed out already; the waiters were told */
	LoadState st = std::move(it->second);
	loads_.erase(it);
	if (!m.errnum) {
		try {
			store_.store_ref(m.ref, std::move(m.data));
		} catch (const Error &e) {
			m.errnum = e.errnum();
			m.error = e.what();
		}
	}
	Msg fwd;
	fwd.type = MsgType::LOAD_REPLY;
	fwd.src = rank_;
	fwd.ref = m.ref;
	fwd.errnum = m.errnum;
	fwd.error = m.error;
	if (!m.errnum)
		fwd.data = *store_.find(m.ref);
	for (uint32_t c : st.children) {
		stats_.loads_served += !m.errnum;
		send(c, fwd);
	}
	for (auto &w : st.waiters) {
		if (m.errnum)
			fail(w, m.errnum, "get '" + w->key + "': " + m.error);
		else if (w->kind == ReqKind::CONNECT)
			finish(w, Reply{});
		else
			lookup_run(w);
	}
}

void Broker::version_advanced()
{
	std::vector<ReqPtr> ready;
	std::erase_if(version_waiters_, [&](const ReqPtr &r) {
		if (!root_known_ || root_.version < r->min_version)
			return false;
		ready.push_back(r);
		return true;
	});
	for (auto &r : ready)
		handle(r);
}

} // namespace kvs

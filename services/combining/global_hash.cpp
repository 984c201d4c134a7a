/*
 * global_hash.cpp: the proxy and the cells of global_hash.hpp.
 */
#include "global_hash.hpp"

#include "common/codec.hpp"
#include "splitmix.hpp"

namespace comb {

struct GlobalHashMap::Wait {
	Scheduler::Task *task;
	bool done = false;
	std::optional<int64_t> result;
};

GlobalHashMap::GlobalHashMap(Runtime &rt, bool combining, size_t buffer)
    : rt_(rt), combining_(combining), buffer_(buffer)
{
	/* key, insert?, value, lookup? -> found?, value */
	h_cell_ = rt_.handler([this](Token t, svc::Reader &r) {
		uint64_t key = r.u64();
		bool ins = r.u8();
		int64_t value = static_cast<int64_t>(r.u64());
		bool look = r.u8();
		if (ins)
			cells_[key] = value;
		svc::Writer w;
		auto it = look ? cells_.find(key) : cells_.end();
		w.u8(it != cells_.end());
		w.u64(it != cells_.end() ? static_cast<uint64_t>(it->second) : 0);
		rt_.reply(t, w.take());
	});
	if (combining_)
		rt_.on_round([this] { flush(); });
}

uint32_t GlobalHashMap::owner(uint64_t key) const
{
	return static_cast<uint32_t>(mix64(key) % rt_.size());
}

void GlobalHashMap::send(uint64_t key, Entry e)
{
	svc::Writer w;
	w.u64(key);
	w.u8(e.insert);
	w.u64(static_cast<uint64_t>(e.value));
	w.u8(e.lookup);
	st_.requests++;
	rt_.post(owner(key), h_cell_, w.take(), [this, e = std::move(e)](std::string &&rep) {
		svc::Reader r(rep, "hash reply");
		bool found = r.u8();
		int64_t value = static_cast<int64_t>(r.u64());
		for (Wait *x : e.waiters) {
			if (found)
				x->result = value;
			x->done = true;
			if (x->task != rt_.sched().current())
				rt_.sched().wake(x->task);
		}
	});
}

void GlobalHashMap::flush()
{
	auto batch = std::move(pending_);
	pending_.clear();
	for (auto &[key, e] : batch)
		send(key, std::move(e));
}

std::optional<int64_t> GlobalHashMap::op(uint64_t key, bool insert, int64_t value)
{
	Wait w{rt_.sched().current(), false, std::nullopt};
	(insert ? st_.inserts : st_.lookups)++;
	Entry *e;
	Entry one;
	if (combining_) {
		auto [it, fresh] = pending_.try_emplace(key);
		if (!fresh)
			st_.combined++;
		e = &it->second;
	} else {
		e = &one;
	}
	if (insert) {
		e->insert = true;
		e->value = value;
	} else {
		e->lookup = true;
	}
	e->waiters.push_back(&w);
	if (!combining_)
		send(key, std::move(one));
	else if (pending_.size() >= buffer_)
		flush();
	while (!w.done)
		rt_.sched().suspend();
	if (!insert && w.result)
		st_.found++;
	return insert ? std::nullopt : w.result;
}

void GlobalHashMap::insert(uint64_t key, int64_t value)
{
	op(key, true, value);
}

std::optional<int64_t> GlobalHashMap::lookup(uint64_t key)
{
	return op(key, false, 0);
}

} // namespace comb

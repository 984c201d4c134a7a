/*
 * broker_fence.cpp: fences travelling up the tree, applied at the root, and
 * the new root travelling back down (broker.hpp, "Protocol").
 */
#include <cerrno>

#include "broker.hpp"
#include "error.hpp"

namespace kvs {

void Broker::fence_join(FenceBatch batch)
{
	std::string name = batch.name;
	stats_.fence_ops_in += batch.ops.size();
	FenceState &st = fences_[name];
	if (!st.merger) {
		st.merger.emplace(std::move(batch));
		st.first = Clock::now();
	} else {
		try {
			st.merger->merge(std::move(batch));
		} catch (const Error &e) {
			/* More participants than nprocs, or a different nprocs:
			 * the fence cannot complete; tell everyone below. */
			fences_.erase(name);
			fence_fail(name, e);
			return;
		}
	}
	const FenceBatch &b = st.merger->batch();
	if (rank_ == 0) {
		if (b.count >= b.nprocs)
			fence_apply(name);
		return;
	}
	fence_maybe_forward(name, false);
}

/*
 * A broker holds a fence until its whole subtree has joined when the fence
 * spans every rank (nprocs == size: one participant per broker, the KAP
 * case), so that batches meet and merge here; any other fence, and a held
 * one after fence_hold, is forwarded at once.
 */
void Broker::fence_maybe_forward(const std::string &name, bool force)
{
	auto it = fences_.find(name);
	if (it == fences_.end())
		return;
	const FenceBatch &b = it->second.merger->batch();
	bool whole = b.count >= subtree_ || b.count >= b.nprocs;
	if (!force && b.nprocs == size_ && !whole)
		return;
	Msg m;
	m.type = MsgType::FENCE;
	m.src = rank_;
	m.batch = batch_encode(b);
	stats_.fence_batches_out++;
	stats_.fence_ops_out += b.ops.size();
	fences_.erase(it);
	send((rank_ - 1) / cfg_.fanout, m);
}

void Broker::fence_apply(const std::string &name)
{
	auto it = fences_.find(name);
	FenceBatch b = std::move(*it->second.merger).take();
	fences_.erase(it);
	try {
		Applied a = apply_ops(store_, root_.ref, b.ops, cfg_.limits);
		RootRef next{root_.version + 1, a.root_ref};
		/* Durable first: a failed commit leaves the previous root. */
		store_.set_root(next);
		root_ = next;
	} catch (const Error &e) {
		fence_fail(name, e);
		return;
	}
	stats_.fences_applied++;
	stats_.fence_ops_out += b.ops.size();
	publish_root({name});
}

void Broker::fence_fail(const std::string &name, const Error &e)
{
	Msg m;
	m.type = MsgType::FENCE_ERR;
	m.src = rank_;
	m.names = {name};
	m.errnum = e.errnum();
	m.error = "fence '" + name + "': " + e.what();
	on_fence_error(m);
}

void Broker::publish_root(const std::vector<std::string> &names)
{
	Msg m;
	m.type = MsgType::SETROOT;
	m.src = rank_;
	m.version = root_.version;
	m.root_ref = root_.ref;
	m.root_obj = *store_.find(root_.ref);
	m.names = names;
	on_setroot(m);
}

void Broker::on_setroot(Msg &m)
{
	if (rank_ != 0)
		store_.store_ref(m.root_ref, m.root_obj);
	if (!root_known_ || m.version > root_.version) {
		root_ = {m.version, m.root_ref};
		root_known_ = true;
	}
	stats_.setroots++;
	m.src = rank_;
	for (uint32_t c : children_)
		send(c, m);
	for (const auto &name : m.names) {
		auto [lo, hi] = fence_waiters_.equal_range(name);
		for (auto it = lo; it != hi; ++it) {
			Reply r;
			r.version = root_.version;
			finish(it->second, std::move(r));
		}
		fence_waiters_.erase(lo, hi);
	}
	version_advanced();
}

void Broker::on_fence(Msg &m)
{
	stats_.fence_batches_in++;
	fence_join(batch_decode(m.batch));
}

void Broker::on_fence_error(Msg &m)
{
	m.src = rank_;
	for (uint32_t c : children_)
		send(c, m);
	const std::string &name = m.names.at(0);
	fences_.erase(name);
	auto [lo, hi] = fence_waiters_.equal_range(name);
	for (auto it = lo; it != hi; ++it)
		fail(it->second, m.errnum, m.error);
	fence_waiters_.erase(lo, hi);
}

} // namespace kvs

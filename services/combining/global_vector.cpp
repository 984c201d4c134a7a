/*
 * global_vector.cpp: batches, the master's handlers and the owners' of
 * global_vector.hpp.
 */
#include "global_vector.hpp"

#include <cstring>

#include "common/codec.hpp"
#include "common/error.hpp"

namespace comb {

struct GlobalVector::Wait {
	Scheduler::Task *task;
	bool done = false;
	int64_t value = 0;
	bool ok = false;	/* pushed, or popped an element */
};

GlobalVector::GlobalVector(Runtime &rt, VecKind kind, Mode mode, uint64_t capacity,
			   size_t buffer)
    : rt_(rt), kind_(kind), mode_(mode), capacity_(capacity),
      block_((capacity + rt.size() - 1) / rt.size()), store_(block_),
      master_(kind, capacity, combines_at_master(mode)), comb_(kind, buffer)
{
	h_acquire_ = rt_.handler([this](Token t, svc::Reader &r) {
		uint8_t code = r.u8();
		uint32_t count = r.u32();
		if (code > uint8_t(VecOp::POP))
			throw svc::Error(EPROTO, "vector request from process " +
							 std::to_string(t.src) + ": bad operation " +
							 std::to_string(code));
		auto op = static_cast<VecOp>(code);
		uint64_t tag = next_tag_++;
		tokens_.emplace(tag, t);
		master_.submit({op, count, tag});
		pump();
	});
	h_release_ = rt_.handler([this](Token, svc::Reader &) {
		master_.release();
		pump();
	});
	h_write_ = rt_.handler([this](Token t, svc::Reader &r) {
		uint64_t start = r.u64();
		std::string_view v = r.view();
		int64_t *p = owned_slots(t, start, v.size() / sizeof(int64_t));
		std::memcpy(p, v.data(), v.size());
		rt_.reply(t, {});
	});
	h_read_ = rt_.handler([this](Token t, svc::Reader &r) {
		uint64_t start = r.u64();
		uint32_t n = r.u32();
		const int64_t *p = owned_slots(t, start, n);
		rt_.reply(t, std::string(reinterpret_cast<const char *>(p), n * sizeof(int64_t)));
	});
}

int64_t *GlobalVector::owned_slots(Token t, uint64_t start, uint64_t n)
{
	uint64_t first = uint64_t(rt_.rank()) * block_;
	if (start < first || start - first > store_.size() || n > store_.size() - (start - first))
		throw svc::Error(EPROTO, "vector request from process " + std::to_string(t.src) +
						 " for slots " + std::to_string(start) + "+" +
						 std::to_string(n) + " outside this process's block");
	return &store_[start - first];
}

void GlobalVector::pump()
{
	for (;;) {
		std::vector<VecGrant> gs = master_.next();
		if (gs.empty())
			return;
		for (const VecGrant &g : gs) {
			auto it = tokens_.find(g.req.tag);
			Token t = it->second;
			tokens_.erase(it);
			svc::Writer w;
			w.u64(g.start);
			w.u32(g.count);
			rt_.reply(t, w.take());
		}
	}
}

GlobalVector::Moved GlobalVector::batch(VecOp op, const std::vector<int64_t> &values,
					uint32_t count)
{
	svc::Writer w;
	w.u8(static_cast<uint8_t>(op));
	w.u32(count);
	st_.master_requests++;
	st_.pop_requests += op == VecOp::POP;
	st_.batched_ops += count;
	std::string rep = rt_.call(0, h_acquire_, w.take());
	svc::Reader r(rep, "vector grant");
	uint64_t start = r.u64();
	Moved m{r.u32(), {}};
	if (!m.count)
		return m;
	/* One request per owner's contiguous run of slots. */
	std::vector<Runtime::Request> reqs;
	for (uint32_t i = 0; i < m.count;) {
		uint64_t s = master_.slot(start + i);
		uint64_t run = std::min<uint64_t>(m.count - i, block_ - s % block_);
		run = std::min<uint64_t>(run, capacity_ - s);
		svc::Writer q;
		q.u64(s);
		if (op == VecOp::PUSH)
			q.str(std::string_view(reinterpret_cast<const char *>(&values[i]),
					       run * sizeof(int64_t)));
		else
			q.u32(static_cast<uint32_t>(run));
		reqs.push_back({static_cast<uint32_t>(s / block_),
				op == VecOp::PUSH ? h_write_ : h_read_, q.take()});
		i += static_cast<uint32_t>(run);
	}
	st_.owner_requests += reqs.size();
	std::vector<std::string> got = rt_.call_all(std::move(reqs));
	if (op == VecOp::POP) {
		m.values.resize(m.count);
		size_t off = 0;
		for (const std::string &g : got) {
			std::memcpy(&m.values[off], g.data(), g.size());
			off += g.size() / sizeof(int64_t);
		}
	}
	rt_.send(0, h_release_, {});
	return m;
}

void GlobalVector::combine()
{
	while (comb_.pending()) {
		std::vector<PendingOp> b = comb_.take_batch();
		VecOp op = b.front().op;
		std::vector<int64_t> values;
		if (op == VecOp::PUSH)
			for (const PendingOp &p : b)
				values.push_back(p.value);
		Moved m = batch(op, values, static_cast<uint32_t>(b.size()));
		for (size_t k = 0; k < b.size(); k++) {
			auto *w = static_cast<Wait *>(b[k].ctx);
			w->ok = k < m.count;
			/* Pops take the granted range from its top down. */
			if (op == VecOp::POP && w->ok)
				w->value = m.values[m.count - 1 - k];
			w->done = true;
			rt_.sched().wake(w->task);
		}
	}
	combining_ = false;
}

std::optional<int64_t> GlobalVector::op(VecOp op, int64_t value)
{
	Wait w{rt_.sched().current()};
	w.value = value;
	if (!combines_locally(mode_)) {
		Moved m = batch(op, {value}, 1);
		w.ok = m.count == 1;
		if (op == VecOp::POP && w.ok)
			w.value = m.values[0];
	} else if (auto pair = comb_.add({op, value, &w})) {
		auto *push = static_cast<Wait *>(pair->first.ctx);
		auto *pop = static_cast<Wait *>(pair->second.ctx);
		push->ok = pop->ok = true;
		pop->value = push->value;
		Wait *other = push == &w ? pop : push;
		other->done = true;
		rt_.sched().wake(other->task);
	} else {
		if (!combining_) {
			combining_ = true;
			rt_.spawn([this] { combine(); });
		}
		while (!w.done)
			rt_.sched().suspend();
	}
	if (op == VecOp::PUSH)
		(w.ok ? st_.pushes : st_.pushes_full)++;
	else
		(w.ok ? st_.pops : st_.pops_empty)++;
	if (!w.ok)
		return std::nullopt;
	return w.value;
}

bool GlobalVector::push(int64_t v)
{
	return op(VecOp::PUSH, v).has_value();
}

std::optional<int64_t> GlobalVector::pop()
{
	return op(VecOp::POP, 0);
}

VecStats GlobalVector::stats() const
{
	VecStats s = st_;
	s.matched = comb_.matched();
	s.master_groups = master_.stats().groups;
	s.master_combined = master_.stats().combined;
	return s;
}

} // namespace comb

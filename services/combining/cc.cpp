/*
 * cc.cpp: the three phases of cc.hpp.
 */
#include "cc.hpp"

#include <algorithm>

#include "common/codec.hpp"

namespace comb {

namespace {
/* A pair of roots below 2^32 as one key, the smaller first. */
uint64_t pair_key(uint64_t a, uint64_t b)
{
	return std::min(a, b) << 32 | std::max(a, b);
}

uint64_t find(std::unordered_map<uint64_t, uint64_t> &comp, uint64_t x)
{
	while (comp[x] != x)
		x = comp[x] = comp[comp[x]];
	return x;
}
} // namespace

Cc::Cc(Runtime &rt, DistGraph &g, CcVariant variant, size_t buffer, size_t workers)
    : rt_(rt), g_(g), variant_(variant), workers_(workers), label_(g.owned(), -1),
      set_(rt, variant == CcVariant::COMBINED, buffer)
{
	/* w, root -> w's label before (-1: claimed now for root) */
	h_claim_ = rt_.handler([this](Token t, svc::Reader &r) {
		uint64_t i = g_.owned_index(r.u64(), t.src);
		int64_t root = static_cast<int64_t>(r.u64());
		svc::Writer w;
		w.u64(static_cast<uint64_t>(label_[i]));
		if (label_[i] < 0)
			label_[i] = root;
		rt_.reply(t, w.take());
	});
	h_reduced_ = rt_.handler([this](Token t, svc::Reader &r) {
		while (r.left())
			reduced_.push_back(r.u64());
		rt_.reply(t, {});
	});
}

void Cc::conflict(uint64_t a, uint64_t b)
{
	if (variant_ == CcVariant::RELAXED)
		relaxed_.insert(pair_key(a, b));
	else
		set_.insert(pair_key(a, b));
}

void Cc::explore(uint64_t i)
{
	uint64_t root = g_.global(i);
	label_[i] = int64_t(root);
	std::vector<uint64_t> stack = {root};
	while (!stack.empty()) {
		uint64_t x = stack.back();
		stack.pop_back();
		for (uint64_t w : g_.adjacency(x)) {
			svc::Writer q;
			q.u64(w);
			q.u64(root);
			std::string rep = rt_.call(g_.owner(w), h_claim_, q.take());
			svc::Reader r(rep, "cc claim");
			int64_t before = static_cast<int64_t>(r.u64());
			if (before < 0)
				stack.push_back(w);
			else if (uint64_t(before) != root)
				conflict(uint64_t(before), root);
		}
	}
}

uint64_t Cc::run()
{
	std::fill(label_.begin(), label_.end(), -1);
	reduced_.clear();
	/* 1: explore */
	rt_.parallel(workers_, [&](size_t w) {
		for (uint64_t i = w; i < g_.owned(); i += workers_)
			if (label_[i] < 0)
				explore(i);
	});
	rt_.barrier();
	/* 2: every process gets the reduced graph, then hooks and compresses */
	svc::Writer mine;
	if (variant_ == CcVariant::RELAXED)
		for (uint64_t k : relaxed_)
			mine.u64(k);
	else
		for (const auto &kv : set_.map().local())
			mine.u64(kv.first);
	rt_.call_everywhere(h_reduced_, mine.take());
	rt_.barrier();
	std::unordered_map<uint64_t, uint64_t> comp;
	for (uint64_t k : reduced_)
		comp[k >> 32] = k >> 32, comp[k & 0xffffffffu] = k & 0xffffffffu;
	for (bool changed = true; changed;) {
		changed = false;
		for (uint64_t k : reduced_) {
			uint64_t a = comp[k >> 32], b = comp[k & 0xffffffffu];
			if (a != b && comp[std::max(a, b)] == std::max(a, b)) {
				comp[std::max(a, b)] = std::min(a, b);
				changed = true;
			}
		}
		for (auto &kv : comp)
			kv.second = find(comp, kv.first);
	}
	/* 3: labels */
	int64_t reps = 0;
	for (uint64_t i = 0; i < g_.owned(); i++) {
		auto it = comp.find(uint64_t(label_[i]));
		if (it != comp.end())
			label_[i] = int64_t(it->second);
		reps += label_[i] == int64_t(g_.global(i));
	}
	return uint64_t(rt_.allreduce_sum(reps));
}

} // namespace comb

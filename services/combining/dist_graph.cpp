/*
 * dist_graph.cpp: the CSR and the adjacency reads of dist_graph.hpp.
 */
#include "dist_graph.hpp"

#include <cstring>

#include "common/codec.hpp"
#include "common/error.hpp"

namespace comb {

DistGraph::DistGraph(Runtime &rt, uint64_t nvertices, const std::vector<Edge> &edges)
    : rt_(rt), n_(nvertices), p_(rt.size()), me_(rt.rank())
{
	uint64_t mine = n_ > me_ ? (n_ - me_ + p_ - 1) / p_ : 0;
	off_.assign(mine + 1, 0);
	auto each = [&](auto &&add) {
		for (const Edge &e : edges) {
			if (owner(e.u) == me_)
				add(local(e.u), e.v);
			if (e.u != e.v && owner(e.v) == me_)
				add(local(e.v), e.u);
		}
	};
	each([&](uint64_t i, uint64_t) { off_[i + 1]++; });
	for (uint64_t i = 0; i < mine; i++)
		off_[i + 1] += off_[i];
	adj_.resize(off_[mine]);
	std::vector<uint64_t> fill(off_.begin(), off_.end() - 1);
	each([&](uint64_t i, uint64_t w) { adj_[fill[i]++] = w; });

	h_adj_ = rt_.handler([this](Token t, svc::Reader &r) {
		uint64_t i = owned_index(r.u64(), t.src);
		rt_.reply(t, std::string(reinterpret_cast<const char *>(begin(i)),
					 degree(i) * sizeof(uint64_t)));
	});
}

uint64_t DistGraph::owned_index(uint64_t v, uint32_t src) const
{
	if (v >= n_ || owner(v) != me_)
		throw svc::Error(EPROTO, "graph request from process " + std::to_string(src) +
						 " for vertex " + std::to_string(v) +
						 ", not one of this process's");
	return local(v);
}

std::vector<uint64_t> DistGraph::adjacency(uint64_t v)
{
	svc::Writer w;
	w.u64(v);
	std::string rep = rt_.call(owner(v), h_adj_, w.take());
	std::vector<uint64_t> out(rep.size() / sizeof(uint64_t));
	std::memcpy(out.data(), rep.data(), rep.size());
	return out;
}

} // namespace comb

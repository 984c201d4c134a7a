/*
 * bfs.cpp: the searches of bfs.hpp.
 */
#include "bfs.hpp"

#include <algorithm>

#include "common/codec.hpp"
#include "common/error.hpp"

namespace comb {

namespace {
std::string two(uint64_t a, uint64_t b)
{
	svc::Writer w;
	w.u64(a);
	w.u64(b);
	return w.take();
}
} // namespace

Bfs::Bfs(Runtime &rt, DistGraph &g, const BfsConfig &cfg)
    : rt_(rt), g_(g), cfg_(cfg), parent_(g.owned(), -1), in_frontier_(g.vertices(), false)
{
	if (!cfg_.tuned) {
		cur_ = std::make_unique<GlobalVector>(rt, VecKind::QUEUE, cfg.mode, g.vertices(),
						      cfg.buffer);
		next_ = std::make_unique<GlobalVector>(rt, VecKind::QUEUE, cfg.mode,
						       g.vertices(), cfg.buffer);
	}
	/* w, parent -> 1 when w was unreached and is now claimed */
	h_claim_ = rt_.handler([this](Token t, svc::Reader &r) {
		uint64_t i = g_.owned_index(r.u64(), t.src);
		int64_t p = static_cast<int64_t>(r.u64());
		bool fresh = parent_[i] < 0;
		if (fresh)
			parent_[i] = p;
		rt_.reply(t, std::string(1, char(fresh)));
	});
	/* tuned top-down: the same claim, the claimed vertex joins the next
	 * frontier at its owner */
	h_grow_ = rt_.handler([this](Token t, svc::Reader &r) {
		uint64_t i = g_.owned_index(r.u64(), t.src);
		int64_t p = static_cast<int64_t>(r.u64());
		if (parent_[i] < 0) {
			parent_[i] = p;
			grown_.push_back(i);
		}
		rt_.reply(t, {});
	});
	/* tuned bottom-up: a process's frontier, for every process's bitmap */
	h_publish_ = rt_.handler([this](Token t, svc::Reader &r) {
		while (r.left()) {
			uint64_t v = r.u64();
			if (v >= in_frontier_.size())
				throw svc::Error(EPROTO, "frontier from process " +
								 std::to_string(t.src) + " names vertex " +
								 std::to_string(v));
			in_frontier_[v] = true;
		}
		rt_.reply(t, {});
	});
}

void Bfs::search(uint64_t root)
{
	std::fill(parent_.begin(), parent_.end(), -1);
	levels_ = bottom_up_ = 0;
	if (g_.owner(root) == rt_.rank())
		parent_[g_.local(root)] = int64_t(root);
	if (cfg_.tuned)
		search_tuned(root);
	else
		search_queue(root);
}

void Bfs::search_queue(uint64_t root)
{
	if (rt_.rank() == 0)
		cur_->push(int64_t(root));
	rt_.barrier();
	for (;;) {
		int64_t claimed = 0;
		GlobalVector &cur = *cur_, &next = *next_;
		rt_.parallel(cfg_.workers, [&](size_t) {
			while (auto v = cur.pop()) {
				std::vector<uint64_t> adj = g_.adjacency(uint64_t(*v));
				std::vector<Runtime::Request> reqs;
				for (uint64_t w : adj)
					reqs.push_back({g_.owner(w), h_claim_, two(w, uint64_t(*v))});
				std::vector<std::string> got = rt_.call_all(std::move(reqs));
				for (size_t k = 0; k < adj.size(); k++) {
					if (got[k][0]) {
						next.push(int64_t(adj[k]));
						claimed++;
					}
				}
			}
		});
		levels_++;
		if (rt_.allreduce_sum(claimed) == 0)
			return;
		std::swap(cur_, next_);
	}
}

void Bfs::search_tuned(uint64_t root)
{
	frontier_.clear();
	grown_.clear();
	if (g_.owner(root) == rt_.rank())
		frontier_.push_back(g_.local(root));
	bool bottom_up = false;
	const size_t workers = cfg_.workers;
	for (;;) {
		int64_t mf = 0, mu = 0;
		for (uint64_t i : frontier_)
			mf += int64_t(g_.degree(i));
		for (uint64_t i = 0; i < g_.owned(); i++)
			mu += parent_[i] < 0 ? int64_t(g_.degree(i)) : 0;
		int64_t nf = rt_.allreduce_sum(int64_t(frontier_.size()));
		if (nf == 0)
			return;
		mf = rt_.allreduce_sum(mf);
		mu = rt_.allreduce_sum(mu);
		if (!bottom_up && double(mf) > double(mu) / cfg_.alpha)
			bottom_up = true;
		else if (bottom_up && double(nf) < double(g_.vertices()) / cfg_.beta)
			bottom_up = false;
		if (!bottom_up) {
			rt_.parallel(workers, [&](size_t w) {
				for (size_t k = w; k < frontier_.size(); k += workers) {
					uint64_t v = g_.global(frontier_[k]);
					std::vector<Runtime::Request> reqs;
					for (const uint64_t *u = g_.begin(frontier_[k]);
					     u != g_.end(frontier_[k]); u++)
						reqs.push_back({g_.owner(*u), h_grow_, two(*u, v)});
					rt_.call_all(std::move(reqs));
				}
			});
		} else {
			bottom_up_++;
			svc::Writer list;
			for (uint64_t i : frontier_)
				list.u64(g_.global(i));
			rt_.call_everywhere(h_publish_, list.take());
			rt_.barrier();
			for (uint64_t i = 0; i < g_.owned(); i++) {
				if (parent_[i] >= 0)
					continue;
				for (const uint64_t *u = g_.begin(i); u != g_.end(i); u++) {
					if (in_frontier_[*u]) {
						parent_[i] = int64_t(*u);
						grown_.push_back(i);
						break;
					}
				}
			}
			/* Cleared before the level's last barrier, so before any
			 * process publishes the next level's frontier. */
			in_frontier_.assign(g_.vertices(), false);
		}
		/* Every claim of this level is applied everywhere.  grown_ is
		 * empty again before this process's next allreduce, which every
		 * process passes before it claims vertices of the next level. */
		rt_.barrier();
		frontier_.swap(grown_);
		grown_.clear();
		levels_++;
	}
}

} // namespace comb

/*
 * bfs.hpp: Graph500's breadth-first search over the runtime in three
 * variants (README.md, "Graph kernels").
 *
 * - queue: level-synchronous top-down with the frontier in a GlobalQueue:
 *   workers on every process dequeue a vertex, read its adjacency at its
 *   owner, claim all its neighbours at theirs at once (delegates that set
 *   an unset parent) and enqueue what they claimed into the next level's
 *   queue.  The
 *   queue's mode decides how much is combined (full: the combined queue;
 *   none: uncombined).
 * - tuned: direction-optimizing (Beamer): per-process frontiers; top-down
 *   levels claim neighbours with aggregated delegates, bottom-up levels
 *   publish the frontier to every process and let each unvisited owned
 *   vertex look for a parent among its neighbours; top-down to bottom-up
 *   when the frontier's edges exceed the unvisited vertices' edges / alpha,
 *   back when the frontier holds fewer than vertices / beta.
 * Constructed in the same order on every process, outside workers;
 * search() from every process's root worker at once.
 */
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "dist_graph.hpp"
#include "global_vector.hpp"

namespace comb {

struct BfsConfig {
	bool tuned = false;
	Mode mode = Mode::FULL;		/* the frontier queue's */
	size_t buffer = 1024;
	size_t workers = 2048;
	double alpha = 14, beta = 24;
};

class Bfs {
public:
	Bfs(Runtime &rt, DistGraph &g, const BfsConfig &cfg);

	/* One search; afterwards parents() holds this process's vertices'
	 * parents (-1: not reached), by local index. */
	void search(uint64_t root);
	const std::vector<int64_t> &parents() const { return parent_; }
	uint64_t levels() const { return levels_; }
	uint64_t bottom_up_levels() const { return bottom_up_; }

private:
	void search_queue(uint64_t root);
	void search_tuned(uint64_t root);

	Runtime &rt_;
	DistGraph &g_;
	BfsConfig cfg_;
	std::vector<int64_t> parent_;
	std::unique_ptr<GlobalVector> cur_, next_;	/* queue variant */
	std::vector<uint64_t> frontier_, grown_;	/* tuned: local indices */
	std::vector<bool> in_frontier_;			/* tuned bottom-up: every vertex */
	uint16_t h_claim_, h_grow_, h_publish_;
	uint64_t levels_ = 0, bottom_up_ = 0;
};

} // namespace comb

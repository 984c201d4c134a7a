/*
 * cc.hpp: connected components in the three phases of the MTA-2 algorithm
 * Grappa used (README.md, "Graph kernels").
 *
 * 1. Explore: workers on every process take unclaimed owned vertices as
 *    roots and traverse from them, claiming vertices for their root at the
 *    vertices' owners; where a traversal meets another root's vertex, the
 *    edge between the two roots goes into a set: a GlobalHashSet with
 *    combining (combined) or without (plain), or, relaxed, a per-process set
 *    merged only at the end of the phase (tuned).
 * 2. Every process gets the reduced graph (the roots' edges) and hooks and
 *    compresses it (Shiloach-Vishkin) to a fixed point.
 * 3. Every vertex takes its root's component label.
 * Constructed in the same order on every process, outside workers; run()
 * from every process's root worker at once.
 */
#pragma once

#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "dist_graph.hpp"
#include "global_hash.hpp"

namespace comb {

enum class CcVariant { COMBINED, PLAIN, RELAXED };

class Cc {
public:
	Cc(Runtime &rt, DistGraph &g, CcVariant variant, size_t buffer, size_t workers);

	/* The number of components. */
	uint64_t run();
	/* Edges of the reduced graph (distinct pairs of roots). */
	uint64_t reduced_edges() const { return reduced_.size(); }
	const HashStats &set_stats() const { return set_.map().stats(); }

private:
	void explore(uint64_t root_local);
	void conflict(uint64_t a, uint64_t b);

	Runtime &rt_;
	DistGraph &g_;
	CcVariant variant_;
	size_t workers_;
	std::vector<int64_t> label_;
	GlobalHashSet set_;
	std::unordered_set<uint64_t> relaxed_;
	std::vector<uint64_t> reduced_;		/* every process's pairs, packed */
	uint16_t h_claim_, h_reduced_;
};

} // namespace comb

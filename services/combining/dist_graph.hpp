/*
 * dist_graph.hpp: an undirected graph spread over the processes for the
 * kernels (README.md, "Graph kernels").
 *
 * Vertex v belongs to process v % processes (its local index v / processes),
 * which holds v's adjacency (both directions of every edge, a self-loop
 * once) and the kernels' per-vertex state.  adjacency() from a worker reads
 * any vertex's list, at its owner.  Constructed in the same order on every
 * process, outside workers, from the whole edge list.
 */
#pragma once

#include <cstdint>
#include <vector>

#include "kronecker.hpp"
#include "runtime.hpp"

namespace comb {

class DistGraph {
public:
	DistGraph(Runtime &rt, uint64_t nvertices, const std::vector<Edge> &edges);

	uint64_t vertices() const { return n_; }
	uint32_t owner(uint64_t v) const { return uint32_t(v % p_); }
	uint64_t local(uint64_t v) const { return v / p_; }
	uint64_t global(uint64_t i) const { return i * p_ + me_; }
	/* The local index of v, which a request from process src names: throws
	 * svc::Error(EPROTO) when this process does not own v. */
	uint64_t owned_index(uint64_t v, uint32_t src) const;
	/* Vertices this process owns. */
	uint64_t owned() const { return off_.size() - 1; }
	/* An owned vertex's neighbours (by local index). */
	const uint64_t *begin(uint64_t i) const { return adj_.data() + off_[i]; }
	const uint64_t *end(uint64_t i) const { return adj_.data() + off_[i + 1]; }
	uint64_t degree(uint64_t i) const { return off_[i + 1] - off_[i]; }
	/* From a worker: any vertex's neighbours. */
	std::vector<uint64_t> adjacency(uint64_t v);

private:
	Runtime &rt_;
	uint64_t n_;
	uint32_t p_, me_;
	std::vector<uint64_t> off_, adj_;	/* CSR of owned vertices */
	uint16_t h_adj_;
};

} // namespace comb

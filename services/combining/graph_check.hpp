/*
 * graph_check.hpp: the serial checks of the graph kernels (README.md,
 * "Graph kernels"): Graph500's five validation rules of a BFS parent tree,
 * the edges a BFS traversed as the reference counts them, and union-find's
 * count of connected components.
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kronecker.hpp"

namespace comb {

/*
 * "" when parent (-1: not reached) is a valid BFS tree of edges from root,
 * else what is wrong: the tree is rooted at root and has no cycle, every
 * tree edge is in the graph, levels differ by exactly one along tree edges
 * and by at most one along every edge, and every vertex of the root's
 * component is in the tree.
 */
std::string bfs_validate(uint64_t nvertices, const std::vector<Edge> &edges, uint64_t root,
			 const std::vector<int64_t> &parent);
/* Input edges whose endpoints were reached (each once, self-loops too). */
uint64_t bfs_edges_traversed(const std::vector<Edge> &edges, const std::vector<int64_t> &parent);
/* Components of the graph of nvertices (isolated vertices count). */
uint64_t union_find_components(uint64_t nvertices, const std::vector<Edge> &edges);

} // namespace comb

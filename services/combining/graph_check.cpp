/*
 * graph_check.cpp: the checks of graph_check.hpp.
 */
#include "graph_check.hpp"

#include <algorithm>
#include <numeric>
#include <unordered_set>

namespace comb {

namespace {
uint64_t find(std::vector<uint64_t> &up, uint64_t x)
{
	while (up[x] != x)
		x = up[x] = up[up[x]];
	return x;
}

std::string vtx(uint64_t v) { return std::to_string(v); }
} // namespace

std::string bfs_validate(uint64_t n, const std::vector<Edge> &edges, uint64_t root,
			 const std::vector<int64_t> &parent)
{
	if (parent.size() != n)
		return "parent array of " + vtx(parent.size()) + " vertices, expected " + vtx(n);
	if (parent[root] != int64_t(root))
		return "the root's parent is not the root";
	/* Levels by walking up the tree; a walk longer than n is a cycle. */
	std::vector<int64_t> level(n, -1);
	level[root] = 0;
	std::vector<uint64_t> path;
	for (uint64_t v = 0; v < n; v++) {
		if (parent[v] < 0 || level[v] >= 0)
			continue;
		path.clear();
		uint64_t x = v;
		while (level[x] < 0) {
			if (path.size() > n)
				return "a cycle of parents through vertex " + vtx(v);
			path.push_back(x);
			int64_t p = parent[x];
			if (p < 0 || uint64_t(p) >= n)
				return "vertex " + vtx(x) + " has a parent outside the tree";
			x = uint64_t(p);
		}
		for (size_t i = path.size(); i-- > 0;)
			level[path[i]] = level[x] + int64_t(path.size() - i);
	}
	std::unordered_set<uint64_t> tree_edges_seen;
	for (const Edge &e : edges) {
		bool ru = parent[e.u] >= 0, rv = parent[e.v] >= 0;
		if (ru != rv)
			return "edge " + vtx(e.u) + "-" + vtx(e.v) +
			       " leaves the tree: the root's component is not spanned";
		if (!ru)
			continue;
		if (std::abs(level[e.u] - level[e.v]) > 1)
			return "edge " + vtx(e.u) + "-" + vtx(e.v) + " joins levels " +
			       std::to_string(level[e.u]) + " and " + std::to_string(level[e.v]);
		if (parent[e.u] == int64_t(e.v) && e.u != root)
			tree_edges_seen.insert(e.u);
		if (parent[e.v] == int64_t(e.u) && e.v != root)
			tree_edges_seen.insert(e.v);
	}
	for (uint64_t v = 0; v < n; v++) {
		if (parent[v] < 0 || v == root)
			continue;
		if (level[v] != level[parent[v]] + 1)
			return "tree edge " + vtx(v) + "-" + vtx(parent[v]) +
			       " does not join consecutive levels";
		if (!tree_edges_seen.count(v))
			return "tree edge " + vtx(v) + "-" + vtx(parent[v]) + " is not in the graph";
	}
	return "";
}

uint64_t bfs_edges_traversed(const std::vector<Edge> &edges, const std::vector<int64_t> &parent)
{
	return uint64_t(std::count_if(edges.begin(), edges.end(),
				      [&](const Edge &e) { return parent[e.u] >= 0; }));
}

uint64_t union_find_components(uint64_t n, const std::vector<Edge> &edges)
{
	std::vector<uint64_t> up(n);
	std::iota(up.begin(), up.end(), 0);
	uint64_t comps = n;
	for (const Edge &e : edges) {
		uint64_t a = find(up, e.u), b = find(up, e.v);
		if (a != b) {
			up[std::max(a, b)] = std::min(a, b);
			comps--;
		}
	}
	return comps;
}

} // namespace comb

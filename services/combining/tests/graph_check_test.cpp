/*
 * graph_check_test.cpp: the five BFS rules catch broken trees; edge counts
 * and union-find on small graphs.
 */
#include <gtest/gtest.h>

#include "graph_check.hpp"

using namespace comb;

namespace {
/* 0-1-2-3 a path, 1-3 a chord, 4-5 another component, 6 alone. */
const std::vector<Edge> g = {{0, 1}, {1, 2}, {2, 3}, {1, 3}, {4, 5}, {2, 2}};
} // namespace

TEST(BfsValidate, AcceptsATrueBfsTree)
{
	std::vector<int64_t> parent = {0, 0, 1, 1, -1, -1, -1};
	EXPECT_EQ(bfs_validate(7, g, 0, parent), "");
	EXPECT_EQ(bfs_edges_traversed(g, parent), 5u);
}

TEST(BfsValidate, RejectsEachBrokenRule)
{
	EXPECT_NE(bfs_validate(7, g, 0, {1, 0, 1, 1, -1, -1, -1}), "") << "root's parent";
	EXPECT_NE(bfs_validate(7, g, 0, {0, 0, 3, 2, -1, -1, -1}), "") << "cycle 2-3";
	EXPECT_NE(bfs_validate(7, g, 0, {0, 0, 1, 2, -1, -1, -1}), "") << "levels along 1-3";
	EXPECT_NE(bfs_validate(7, g, 0, {0, 0, 0, 1, -1, -1, -1}), "") << "0-2 not an edge";
	EXPECT_NE(bfs_validate(7, g, 0, {0, 0, 1, -1, -1, -1, -1}), "") << "3 not reached";
	EXPECT_NE(bfs_validate(7, g, 0, {0, 0, 1, 1, 5, -1, -1}), "") << "4 outside";
}

TEST(UnionFind, CountsComponentsWithIsolatedVertices)
{
	EXPECT_EQ(union_find_components(7, g), 3u);
	EXPECT_EQ(union_find_components(3, {}), 3u);
}

/*
 * kronecker_test.cpp: the generator's law and the packed edge file.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "kronecker.hpp"

using namespace comb;

TEST(Kronecker, SlicesAreTheWholeGraphsAndStayInRange)
{
	KroneckerParams p;
	p.scale = 8;
	std::vector<Edge> all = kronecker_graph(p);
	ASSERT_EQ(all.size(), 16u << 8);
	std::vector<Edge> slice = kronecker_edges(p, 100, 10);
	for (size_t i = 0; i < slice.size(); i++) {
		EXPECT_EQ(slice[i].u, all[100 + i].u);
		EXPECT_EQ(slice[i].v, all[100 + i].v);
	}
	for (const Edge &e : all)
		ASSERT_TRUE(e.u < 256 && e.v < 256);
}

TEST(Kronecker, DegreesAreSkewedAsTheInitiatorSays)
{
	KroneckerParams p;
	p.scale = 10;
	std::vector<uint64_t> deg(1024);
	for (const Edge &e : kronecker_graph(p))
		deg[e.u]++;
	uint64_t top = *std::max_element(deg.begin(), deg.end());
	uint64_t isolated = std::count(deg.begin(), deg.end(), 0u);
	/* R-MAT at .57: a few hubs hold hundreds of edges, many vertices none. */
	EXPECT_GT(top, 200u);
	EXPECT_GT(isolated, 100u);
}

TEST(Kronecker, OtherSeedsGiveAnotherGraph)
{
	KroneckerParams a, b;
	a.scale = b.scale = 8;
	b.seed1 = 5;
	std::vector<Edge> x = kronecker_edges(a, 0, 64), y = kronecker_edges(b, 0, 64);
	size_t same = 0;
	for (size_t i = 0; i < x.size(); i++)
		same += x[i].u == y[i].u && x[i].v == y[i].v;
	EXPECT_LT(same, 8u);
}

TEST(EdgeFile, PackedEdgesAreTheReferenceLayout)
{
	unsigned char b[12];
	edge_pack({0x0000abcd12345678ULL, 0x00001234deadbeefULL}, b);
	const unsigned char want[12] = {0x78, 0x56, 0x34, 0x12, 0xef, 0xbe, 0xad, 0xde,
					0xcd, 0xab, 0x34, 0x12};
	EXPECT_EQ(0, std::memcmp(b, want, 12));
	Edge e = edge_unpack(b);
	EXPECT_EQ(e.u, 0x0000abcd12345678ULL);
	EXPECT_EQ(e.v, 0x00001234deadbeefULL);
}

TEST(EdgeFile, WrittenFilesReadBackAndTornOnesAreRefused)
{
	std::string path = ::testing::TempDir() + "comb_edges.bin";
	KroneckerParams p;
	p.scale = 6;
	std::vector<Edge> g = kronecker_graph(p);
	write_edge_file(path, g);
	std::vector<Edge> back = read_edge_file(path);
	ASSERT_EQ(back.size(), g.size());
	EXPECT_EQ(back[7].u, g[7].u);
	EXPECT_EQ(back[7].v, g[7].v);
	std::ofstream(path, std::ios::app) << "x";
	try {
		read_edge_file(path);
		FAIL() << "a torn file was read";
	} catch (const std::exception &e) {
		EXPECT_NE(std::string(e.what()).find("not a whole number of 12-byte"),
			  std::string::npos);
	}
	std::remove(path.c_str());
}

/*
 * kronecker.hpp: Graph500's Kronecker (R-MAT) edge generator and its
 * 12-byte packed edge file (README.md, "Graph kernels").
 *
 * Edge i of a graph of 2^scale vertices and edgefactor * 2^scale edges
 * descends scale levels of the 2x2 initiator A = .57, B = C = .19, D = .05;
 * its random stream depends only on the seeds (Graph500's 2 and 3) and i,
 * so any process generates any slice alike.  Vertex numbers are then
 * scrambled by a bijection of [0, 2^scale) derived from the seeds, as the
 * reference permutes them.  The stream is this project's (splitmix64), not
 * the reference's MRG, so graphs match the reference's in law, not bit for
 * bit.
 *
 * The file is the reference's TMPFILE/REUSEFILE layout: packed edges of
 * three little-endian uint32 (v0's low 32 bits, v1's low 32 bits, high: the
 * top 16 bits of v0 then of v1), nothing else.  read_edge_file throws
 * svc::Error naming the file when it cannot be read or its length is not a
 * multiple of 12.
 */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace comb {

struct Edge {
	uint64_t u, v;
};

struct KroneckerParams {
	int scale = 10;
	int edgefactor = 16;
	uint64_t seed1 = 2, seed2 = 3;
};

/* Edges first..first+count-1. */
std::vector<Edge> kronecker_edges(const KroneckerParams &p, uint64_t first, uint64_t count);
/* The whole graph. */
inline std::vector<Edge> kronecker_graph(const KroneckerParams &p)
{
	return kronecker_edges(p, 0, uint64_t(p.edgefactor) << p.scale);
}

/* One packed edge (12 bytes) and back; vertices below 2^48. */
void edge_pack(const Edge &e, unsigned char out[12]);
Edge edge_unpack(const unsigned char in[12]);
void write_edge_file(const std::string &path, const std::vector<Edge> &edges);
std::vector<Edge> read_edge_file(const std::string &path);

} // namespace comb

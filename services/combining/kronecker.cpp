/*
 * kronecker.cpp: the generator and the packed edge file of kronecker.hpp.
 */
#include "kronecker.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "common/error.hpp"
#include "splitmix.hpp"

namespace comb {

namespace {

constexpr double kA = 0.57, kB = 0.19, kC = 0.19;

double uniform(uint64_t &s)
{
	return double(splitmix64(s) >> 11) * 0x1.0p-53;
}

uint64_t bit_reverse(uint64_t x, int bits)
{
	uint64_t r = 0;
	for (int i = 0; i < bits; i++, x >>= 1)
		r = r << 1 | (x & 1);
	return r;
}

/* A bijection of [0, 2^scale): affine maps around a bit reversal. */
struct Scramble {
	uint64_t mask, m1, c1, m2, c2;
	int bits;
	explicit Scramble(const KroneckerParams &p)
	{
		uint64_t s = p.seed1 * 0x100000001b3ULL ^ p.seed2;
		bits = p.scale;
		mask = p.scale >= 64 ? ~0ULL : (1ULL << p.scale) - 1;
		m1 = splitmix64(s) | 1;
		c1 = splitmix64(s);
		m2 = splitmix64(s) | 1;
		c2 = splitmix64(s);
	}
	uint64_t operator()(uint64_t v) const
	{
		v = (v * m1 + c1) & mask;
		v = bit_reverse(v, bits);
		return (v * m2 + c2) & mask;
	}
};

} // namespace

std::vector<Edge> kronecker_edges(const KroneckerParams &p, uint64_t first, uint64_t count)
{
	Scramble scramble(p);
	std::vector<Edge> out(count);
	for (uint64_t i = 0; i < count; i++) {
		uint64_t s = (p.seed1 << 32 ^ p.seed2) * 0xd6e8feb86659fd93ULL + first + i;
		splitmix64(s);
		uint64_t u = 0, v = 0;
		for (int level = 0; level < p.scale; level++) {
			double r = uniform(s);
			int row = r >= kA + kB;
			int col = (r >= kA && r < kA + kB) || r >= kA + kB + kC;
			u = u << 1 | uint64_t(row);
			v = v << 1 | uint64_t(col);
		}
		out[i] = {scramble(u), scramble(v)};
	}
	return out;
}

void edge_pack(const Edge &e, unsigned char out[12])
{
	uint32_t w[3] = {uint32_t(e.u), uint32_t(e.v),
			 uint32_t((e.u >> 32) & 0xffff) | uint32_t((e.v >> 32) & 0xffff) << 16};
	std::memcpy(out, w, 12);
}

Edge edge_unpack(const unsigned char in[12])
{
	uint32_t w[3];
	std::memcpy(w, in, 12);
	return {uint64_t(w[0]) | uint64_t(w[2] & 0xffff) << 32,
		uint64_t(w[1]) | uint64_t(w[2] >> 16) << 32};
}

namespace {
struct FileCloser {
	void operator()(FILE *f) const { std::fclose(f); }
};
using File = std::unique_ptr<FILE, FileCloser>;

[[noreturn]] void file_error(const std::string &path, const char *what)
{
	throw svc::Error(errno ? errno : EIO, "edge file " + path + ": " + what + ": " +
						      std::strerror(errno ? errno : EIO));
}
} // namespace

void write_edge_file(const std::string &path, const std::vector<Edge> &edges)
{
	File f(std::fopen(path.c_str(), "wb"));
	if (!f)
		file_error(path, "cannot create");
	std::vector<unsigned char> buf(edges.size() * 12);
	for (size_t i = 0; i < edges.size(); i++)
		edge_pack(edges[i], &buf[i * 12]);
	if (std::fwrite(buf.data(), 1, buf.size(), f.get()) != buf.size() ||
	    std::fflush(f.get()))
		file_error(path, "cannot write");
}

std::vector<Edge> read_edge_file(const std::string &path)
{
	errno = 0;
	File f(std::fopen(path.c_str(), "rb"));
	if (!f)
		file_error(path, "cannot open");
	std::vector<unsigned char> buf;
	unsigned char chunk[1 << 16];
	size_t n;
	while ((n = std::fread(chunk, 1, sizeof chunk, f.get())) > 0)
		buf.insert(buf.end(), chunk, chunk + n);
	if (std::ferror(f.get()))
		file_error(path, "cannot read");
	if (buf.size() % 12)
		throw svc::Error(EINVAL, "edge file " + path + ": " + std::to_string(buf.size()) +
						 " bytes is not a whole number of 12-byte packed edges");
	std::vector<Edge> edges(buf.size() / 12);
	for (size_t i = 0; i < edges.size(); i++)
		edges[i] = edge_unpack(&buf[i * 12]);
	return edges;
}

} // namespace comb

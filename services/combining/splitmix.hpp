/*
 * splitmix.hpp: splitmix64, the one random stream and hash of the
 * workloads, the generator and the hash cells.
 */
#pragma once

#include <cstdint>

namespace comb {

/* Advances s and returns the next number of its stream. */
inline uint64_t splitmix64(uint64_t &s)
{
	uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A well-mixed hash of x. */
inline uint64_t mix64(uint64_t x)
{
	return splitmix64(x);
}

} // namespace comb

/* SPDX-License-Identifier: MIT */
/*
 * wl_hash.h: the counter-based hashing every workload's generators share.
 *
 * Inputs (keys, records, graphs, initial values) are functions of (seed,
 * global index) only, so a program's global input does not depend on the
 * rank count and any rank can regenerate any part of it.  The building block
 * is splitmix64's finaliser, a bijection of 64-bit words with good
 * avalanche; programs combine it with their own constants so their streams
 * stay apart.  Changing anything here changes every program's input and
 * checksums.
 */
#ifndef WL_HASH_H
#define WL_HASH_H

#include <stdint.h>

/* 2^64 / golden ratio: the increment of splitmix64's counter. */
#define WL_GOLDEN	0x9e3779b97f4a7c15ULL

static inline uint64_t wl_mix64(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* The top 53 bits of a hash as a double uniform in [0, 1). */
static inline double wl_unit(uint64_t h)
{
	return (double)(h >> 11) * 0x1p-53;
}

#endif /* WL_HASH_H */

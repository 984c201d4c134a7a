/* SPDX-License-Identifier: MIT */
/*
 * Message contents of fi_stress: the header every message carries, the
 * deterministic size and payload of the k-th message from one rank to
 * another, and the checksum that proves the payload arrived intact; and
 * where the k-th RMA chunk from one rank lands in another's window.
 *
 * Everything is a pure function of (seed, src, dst, k), so a receiver can
 * recompute the size it must see without any extra traffic.  Sizes are
 * drawn log-uniformly from [1, max] so small and large messages are equally
 * likely per octave while the mean stays small (about max / ln(max)).
 */
#ifndef STRESS_MSG_H
#define STRESS_MSG_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define STRESS_MAGIC 0x4c475053u	/* "LGPS" */

struct stress_hdr {
	uint32_t magic;
	uint32_t src;		/* sending rank */
	uint64_t seq;		/* k: index among messages src sent to this dst */
	uint64_t len;		/* payload bytes following the header */
	uint64_t sum;		/* stress_sum() of the payload */
};

static inline uint64_t stress_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static inline uint64_t stress_key(uint64_t seed, uint32_t src, uint32_t dst,
				  uint64_t k)
{
	return stress_mix(stress_mix(stress_mix(seed ^ src) ^ dst) ^ k);
}

/* Payload length of message k from src to dst, log-uniform in [1, max]. */
static inline size_t stress_size(uint64_t key, size_t max)
{
	double u = (double)(stress_mix(key) >> 11) / (double)(1ULL << 53);
	size_t n = (size_t)exp(u * log((double)max + 1.0));

	if (n < 1)
		n = 1;
	return n > max ? max : n;
}

/* Fill len bytes with a pseudo-random stream derived from key. */
static inline void stress_fill(void *buf, size_t len, uint64_t key)
{
	unsigned char *p = buf;
	uint64_t s = key, w;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		s += 0x9e3779b97f4a7c15ULL;
		w = stress_mix(s);
		memcpy(p + i, &w, 8);
	}
	s += 0x9e3779b97f4a7c15ULL;
	w = stress_mix(s);
	if (i < len)
		memcpy(p + i, &w, len - i);
}

/*
 * FNV-1a over 64-bit words (then the tail bytes): byte-wise FNV is too slow
 * for the gigabytes a stress run moves, and word-wise keeps the property
 * that matters here, every flipped or shifted byte changes the sum.
 */
static inline uint64_t stress_sum(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t h = 0xcbf29ce484222325ULL, w;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x100000001b3ULL;
	}
	for (; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return (h ^ len) * 0x100000001b3ULL;
}

/* Chunks draw from keys of their own, so no chunk repeats a message. */
#define STRESS_CHUNK_SALT 0x524d4153u	/* "RMAS" */

/*
 * The k-th chunk src writes into dst's window: len bytes (log-uniform in
 * [1, slot / 2]) at off within the chunk's slot, filled by stress_fill(key),
 * and the amount src's k-th atomic adds to dst's counter.
 */
struct stress_chunk {
	uint64_t key;
	size_t off;
	size_t len;
	uint64_t addend;
};

static inline struct stress_chunk stress_chunk(uint64_t seed, uint32_t src,
					       uint32_t dst, uint64_t k,
					       size_t slot)
{
	struct stress_chunk c;

	c.key = stress_key(seed ^ STRESS_CHUNK_SALT, src, dst, k);
	c.len = stress_size(c.key, slot / 2);
	c.off = stress_mix(c.key ^ 1) % (slot - c.len + 1);
	c.addend = (stress_mix(c.key ^ 2) & 0xffff) + 1;
	return c;
}

#endif /* STRESS_MSG_H */

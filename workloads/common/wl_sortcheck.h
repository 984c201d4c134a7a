/* SPDX-License-Identifier: MIT */
/*
 * wl_sortcheck.h: what the sorting workloads (radix, radb, sample) share.
 *
 * - Keys: 32-bit keys from a seeded generator, a function of (seed, global
 *   index) only, so the global input does not depend on the rank count.  The
 *   keys are split over the ranks in contiguous blocks (wl_part.h); a rank may have
 *   none.
 * - Options: -n KEYS (per rank), -N TOTAL (in all, overrides -n), -s SEED,
 *   parsed with sc_opt_keys() inside each program's getopt loop and checked
 *   as a whole by sc_opts_finish().
 * - Checking (collective): sc_sum_reduce() before and after the sort gives a
 *   count, a sum and an xor of two hashes of every key over all ranks; the
 *   output must have the same (a permutation of the input), be sorted on
 *   every rank, and rank i's last key must be <= the first key of the next
 *   non-empty rank.  Every rank reaches the same verdict; rank 0 says on
 *   stderr what was wrong.
 * - Critical path (collective): each program counts, per phase (a radix
 *   pass, the bucket exchange of a sample sort), the messages and bytes each
 *   rank sent and received; sc_crit_phases() turns that into the struct
 *   wl_critical of wl.h (see its comment for the rule).
 *
 * Nothing here exits; functions return 0 or a negative errno.
 */
#ifndef WL_SORTCHECK_H
#define WL_SORTCHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "wl.h"
#include "wl_part.h"

#define SC_KEYS_MAX	(1LL << 28)	/* keys per rank */
#define SC_TOTAL_MAX	2147483647LL	/* keys in all: every count fits an int */
#define SC_WARM_TAG	999	/* apart from every sort's tags */

/* The key options every sort takes. */
struct sc_keys {
	int64_t per_rank;	/* -n */
	int64_t total;		/* -N, or per_rank * nranks */
	bool have_total;
	uint64_t seed;		/* -s */
};

/* Count, sum and xor of hashes of a multiset of keys. */
struct sc_sum {
	uint64_t count;
	uint64_t sum;
	uint64_t xor;
};

/* One phase of a sort as one rank saw it (point-to-point only). */
struct sc_phase {
	int64_t sent;
	int64_t recvd;
	int64_t sent_bytes;
};

/* Options: the case of the getopt loop for -n, -N and -s. */
int sc_opt_keys(const struct wl_prog *p, int opt, const char *arg, struct sc_keys *k);
/* After the loop: sets k->total and refuses sizes beyond the limits. */
int sc_opts_finish(const struct wl_prog *p, struct sc_keys *k);

/* Key g of the global input, and the keys [lo, lo + n) of it. */
uint32_t sc_key(uint64_t seed, int64_t g);
void sc_gen(uint32_t *keys, int64_t lo, int64_t n, uint64_t seed);

/* Local LSD radix sort (8-bit digits), stable; tmp holds n keys. */
void sc_sort(uint32_t *keys, uint32_t *tmp, int64_t n);

/* Collective: the checksum of every rank's keys, reduced over ranks. */
void sc_sum_reduce(const uint32_t *keys, int64_t n, struct sc_sum *s);
/*
 * Collective: 1 when keys (n on this rank) are globally sorted and have the
 * checksum before; 0 otherwise (rank 0 says why on stderr); -ENOMEM.
 */
int sc_check(const struct wl_prog *p, const uint32_t *keys, int64_t n,
	     const struct sc_sum *before);

/* Collective, untimed: one small message to and from every other rank. */
void sc_warmup(const struct wl_prog *p);

/*
 * Collective: the critical path of nphases phases separated by
 * synchronisation (every phase needs all of the one before).  Within a
 * phase the messages travel at once, so it adds one latency when any rank
 * sent anything (path); its sends and receives are those of the rank whose
 * CPU handles the most of them (sent + recvd), all paying their overhead
 * one after the other on that CPU; its bytes are the most any one rank's
 * port sent.  Every rank gets the same result.
 */
int sc_crit_phases(const struct wl_prog *p, const struct sc_phase *ph, int nphases,
		   struct wl_critical *crit);

#endif /* WL_SORTCHECK_H */

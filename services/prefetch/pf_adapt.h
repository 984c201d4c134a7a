/*
 * pf_adapt.h: adaptive read-ahead of one file, as pure logic (README.md,
 * "Adaptive read-ahead").
 *
 * The reads say what comes next, as Linux's and Lustre's strided
 * read-ahead find it: a read that starts where the last ended is
 * sequential; two equal steps between read starts (negative: a backward
 * reader) are a stride, with the read's size; steps forward of differing
 * lengths, the gaps between the reads at most a quarter of the reads on
 * average, are a dense forward reader.  Only what the pattern predicts is fetched: the
 * next reads of a stride (those with gaps of at most a quarter of a read
 * between them fetched as one range), the bytes ahead of a sequential or dense forward reader.
 *
 * The window (reads predicted ahead) doubles each time a read finds its
 * bytes fetched and halves each time one does not, or a fetched range
 * leaves unread; new fetches wait until half the window is missing, so
 * they come in batches.  A read back into what is held (a backward seek
 * of a forward reader) leaves the pattern as it was.  The ranges held
 * never exceed the budget (CacheSize × BlockSize bytes, PF_ADAPT_HELD
 * ranges): the oldest leave first, and a sequential or forward-strided
 * reader's ranges leave once it has read past them.
 */
#ifndef PF_ADAPT_H
#define PF_ADAPT_H

#include <stdint.h>

#include "pf_window.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PF_ADAPT_HELD 128	/* ranges held at most */
#define PF_ADAPT_WIN 64		/* reads predicted ahead at most */
#define PF_ADAPT_WIN0 4		/* the window when a pattern is first seen */

enum pf_pattern { PF_PAT_NONE, PF_PAT_SEQUENTIAL, PF_PAT_STRIDED, PF_PAT_FORWARD };

struct pf_held {
	uint64_t off, len;
	int used;		/* a read found bytes in it */
	int fresh;		/* fetched by the access in progress */
};

struct pf_adapt {
	uint64_t budget;	/* bytes held at most */
	uint64_t max_fetch;	/* bytes of one fetch at most */
	int have_prev;
	uint64_t prev_off, prev_len;
	int64_t stride;
	unsigned streak;	/* equal strides in a row */
	unsigned forward;	/* forward steps in a row, their bytes: */
	uint64_t sum_step, sum_len;
	enum pf_pattern pat;
	unsigned win;
	unsigned nheld;		/* in fetch order: [0] the oldest */
	uint64_t held_bytes;
	struct pf_held held[PF_ADAPT_HELD];
	uint64_t hits, misses, wasted;
	/* What the last access asks for: releases first, then fetches. */
	unsigned nfetch, nrelease;
	struct pf_extent fetch[PF_ADAPT_HELD], release[2 * PF_ADAPT_HELD];
};

/* budget >= 1 byte; max_fetch >= 1. */
void pf_adapt_init(struct pf_adapt *a, uint64_t budget, uint64_t max_fetch);

/*
 * One read of len bytes at off, predicted within [lo, hi) (its WillNeed
 * range, or the file): learns from it and fills a->fetch and a->release.
 */
void pf_adapt_access(struct pf_adapt *a, uint64_t lo, uint64_t hi, uint64_t off, uint64_t len);

#ifdef __cplusplus
}
#endif

#endif

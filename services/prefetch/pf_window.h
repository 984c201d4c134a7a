/*
 * pf_window.h: one file's prefetch window, Mercury's rules as pure logic.
 *
 * A request (off, len) that starts inside a WillNeed range and is no larger
 * than a block asks for its block b = off / BlockSize and the ReadAheadSize
 * blocks after it, each cut to the range and to the file.  Blocks already
 * in the window become the most recently used; the others are fetched.  The
 * window holds at most CacheSize blocks: a block pushed out (least recently
 * used first) is released.  Since ReadAheadSize <= CacheSize - 1, the
 * blocks of one request always fit, and a request never releases a block it
 * asked for.
 */
#ifndef PF_WINDOW_H
#define PF_WINDOW_H

#include <stdint.h>

#include "pf_config.h"

#ifdef __cplusplus
extern "C" {
#endif

struct pf_window {
	uint32_t cap;		/* CacheSize blocks */
	uint32_t n;
	uint32_t max;		/* most blocks ever held */
	uint64_t *blocks;	/* [0] least recently used .. [n - 1] most */
};

/* A byte range of the file. */
struct pf_extent {
	uint64_t off;
	uint64_t len;
};

/* What one request asks for: at most cap fetches and cap releases. */
struct pf_plan {
	uint32_t nfetch, nrelease;
	struct pf_extent *fetch;	/* cap entries each, from pf_window_init */
	struct pf_extent *release;
};

enum pf_verdict {
	PF_PLANNED = 0,		/* plan holds the fetches and releases (maybe none) */
	PF_OUTSIDE = 1,		/* not in a WillNeed range */
	PF_OVERSIZED = 2,	/* larger than a block: not prefetched */
};

/* 0 or -ENOMEM; cap >= 1.  plan gets arrays for cap extents each. */
int pf_window_init(struct pf_window *w, struct pf_plan *plan, uint32_t cap);
void pf_window_fini(struct pf_window *w, struct pf_plan *plan);

/*
 * The WillNeed range of e's file (whose size is size) that off is in, cut to
 * the file, as [*lo, *hi): 1, or 0 when there is none.  An entry without
 * WillNeed ranges: the whole file.
 */
int pf_window_range(const struct pf_entry *e, uint64_t size, uint64_t off, uint64_t *lo,
		    uint64_t *hi);

/*
 * Applies one request of e's file, whose size is size, to the window and
 * fills plan.  Pure: the caller fetches and releases.
 */
enum pf_verdict pf_window_access(struct pf_window *w, struct pf_plan *plan,
				 const struct pf_entry *e, uint64_t size, uint64_t off,
				 uint64_t len);

#ifdef __cplusplus
}
#endif

#endif

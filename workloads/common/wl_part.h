/* SPDX-License-Identifier: MIT */
/*
 * wl_part.h: the block split of TOTAL items over N ranks every workload
 * uses.
 *
 * Items are split in contiguous blocks as evenly as possible: the first
 * TOTAL mod N ranks get one more item than the others, and a rank may get
 * none (TOTAL < N).  Rank r's block starts at global index lo and holds n
 * items; the owner of a global index is the rank whose block holds it.
 */
#ifndef WL_PART_H
#define WL_PART_H

#include <stdint.h>

/* Rank's block: first global index *lo and count *n.  nranks >= 1. */
void wl_part(int64_t total, int nranks, int rank, int64_t *lo, int64_t *n);

/*
 * Owner of global index pos (0 <= pos < total) and, when off is non-NULL,
 * pos's offset inside the owner's block.
 */
int wl_owner(int64_t total, int nranks, int64_t pos, int64_t *off);

#endif /* WL_PART_H */

/* SPDX-License-Identifier: MIT */
/* wl_part.c: the block split of wl_part.h. */
#include "wl_part.h"

void wl_part(int64_t total, int nranks, int rank, int64_t *lo, int64_t *n)
{
	int64_t base = total / nranks, extra = total % nranks;

	*n = base + (rank < extra);
	*lo = rank * base + (rank < extra ? rank : extra);
}

int wl_owner(int64_t total, int nranks, int64_t pos, int64_t *off)
{
	int64_t base = total / nranks, extra = total % nranks;
	int64_t big = extra * (base + 1);	/* positions of the larger blocks */
	int64_t r, start;

	if (pos < big) {
		r = pos / (base + 1);
		start = r * (base + 1);
	} else {
		r = extra + (pos - big) / base;
		start = big + (r - extra) * base;
	}
	if (off)
		*off = pos - start;
	return (int)r;
}

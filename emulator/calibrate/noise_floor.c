/* SPDX-License-Identifier: MIT */
/* The host's lateness floor from a busy thread's stalls (noise_floor.h). */
#include <stdlib.h>

#include "noise_floor.h"

static int noise_longest_first(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

	return x < y ? 1 : x > y ? -1 : 0;
}

uint64_t noise_stalled_ns(const uint64_t *stall_ns, size_t n)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += stall_ns[i];
	return sum;
}

/*
 * f(y) = sum max(0, s - y) falls as y grows, piecewise linear: between the
 * k-th and (k+1)-th longest stalls only the k longest count, f(y) = S_k -
 * k y with S_k their sum.  Walk k up until the y that gives the target
 * lies in that piece; stalls that sum to no more than the target leave y
 * at or below 0 to the last piece, and the floor at 0.
 */
uint64_t noise_floor_ns(uint64_t *stall_ns, size_t n, uint64_t span_ns, double q)
{
	double target = (1.0 - q) * (double) span_ns, sum = 0, y;

	if (!n)
		return 0;
	qsort(stall_ns, n, sizeof(*stall_ns), noise_longest_first);
	for (size_t k = 1; k <= n; k++) {
		sum += (double) stall_ns[k - 1];
		y = (sum - target) / (double) k;
		if (k == n || y >= (double) stall_ns[k])
			return y > 0 ? (uint64_t) (y + 0.5) : 0;
	}
	return 0;
}

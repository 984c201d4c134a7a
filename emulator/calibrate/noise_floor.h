/* SPDX-License-Identifier: MIT */
/*
 * What the host alone does to a release: the stalls of a busy thread and
 * the lateness they cause at a random instant (loggp-hostnoise).
 *
 * A thread that spins reading the clock sees a gap wherever it was not
 * running: a timer tick, an interrupt, the hypervisor running another
 * guest.  A release due at a uniformly random instant that falls inside a
 * stall of length s, x into it, is late by the rest, s - x; so
 *
 *     P(late > y) = sum over stalls of max(0, s - y) / span
 *
 * and its q-quantile is the least y with that at most 1 - q.  That is the
 * floor under any user-space release of this host: a shim that is perfect
 * still shows it as lateness (docs/design.md, "Where lateness comes from").
 *
 * Pure functions over caller-owned arrays; nothing here allocates.
 */
#ifndef NOISE_FLOOR_H
#define NOISE_FLOOR_H

#include <stddef.h>
#include <stdint.h>

/*
 * The q-quantile (0 <= q < 1) of the lateness the n stalls (ns, any
 * order; sorted in place, longest first) cause at a random instant of a
 * span of span_ns.  0 when they are short or rare enough.
 */
uint64_t noise_floor_ns(uint64_t *stall_ns, size_t n, uint64_t span_ns, double q);

/* Sum of the n stalls, in ns. */
uint64_t noise_stalled_ns(const uint64_t *stall_ns, size_t n);

#endif /* NOISE_FLOOR_H */

/* SPDX-License-Identifier: MIT */
/*
 * Egress shaping of one port: loss, queue limits, pacing and delay.
 *
 * For a packet of n bytes arriving at t for egress port p (knobs s):
 *   1. with probability s->loss it is dropped (WIRE_DROP_LOSS);
 *   2. if the delay line would then hold more than s->queue_pkts packets
 *      or s->queue_bytes bytes it is tail-dropped (WIRE_DROP_QUEUE);
 *   3. it may depart at d = max(t, tat + c - tau, last_d + gap): a
 *      token bucket of depth max(burst, n) bytes refilled at 1/bulk_gap
 *      bytes per second, written as GCRA (tat = theoretical arrival
 *      time, c = n * bulk_gap, tau = max(burst * bulk_gap, c)); then
 *      tat = max(tat, d) + c.  So an idle port lets exactly burst bytes
 *      through at once, and the long-run rate is exactly 1/bulk_gap.
 *      This is lgp_core's pacer (lgp/pacer.h) with the port's burst;
 *   4. with a network (wire_pairs.h) and a pair (src -> p) that paces,
 *      d becomes its start on the pair's path: the source's pacer at this
 *      egress, with the pair's gap and bulk gap, reserved from d;
 *   5. it is released at r = d + L + P + j, j uniform in [-jitter,
 *      +jitter] (r >= d), L the port's latency or, with a delay
 *      distribution (wire_egress_set_dist()), a delay drawn from it around
 *      the port's latency, P the pair's latency (0 without one), and
 *      unless reordering is allowed r = max(r, previous r of the same
 *      source port) (lgp_dist_in_order()), so neither reorders the
 *      packets of one source; packets of two sources keep the order of
 *      their release times.
 * Dropped packets consume no tokens.  Knob changes apply to packets
 * admitted afterwards; packets already in the line keep their r.
 *
 * n is the Ethernet frame as the port sees it: header + payload, no
 * preamble, FCS or inter-frame gap (af_packet never shows those).
 *
 * The delay line is lgp_core's delay queue (lgp/dqueue.h), sized at init:
 * each slot holds the packet (item), its arrival time (stamp_ns, for the
 * delay histogram) and its frame length (bytes, summed for queue_bytes).
 * Without reordering release times are pushed in non-decreasing order, so
 * a push costs O(1) and a pop O(log n).
 *
 * All times are nanoseconds on lgp_core's clock (lgp/clock.h); only the
 * forwarding lcore uses an egress (no locking).
 */
#ifndef WIRE_EGRESS_H
#define WIRE_EGRESS_H

#include <stdint.h>

#include <lgp/dist.h>
#include <lgp/dqueue.h>
#include <lgp/pacer.h>
#include <lgp/stats.h>

#include "wire_pairs.h"
#include "wire_shape.h"
#include "wire_stats.h"

enum wire_verdict {
	WIRE_ADMIT,
	WIRE_DROP_LOSS,
	WIRE_DROP_QUEUE,
};

struct wire_egress {
	struct lgp_dq line;		/* the delay line */
	struct lgp_pacer pacer;		/* departures: gap, bulk gap, burst */
	uint64_t *last_release_ns;	/* [sources]: order per source */
	struct lgp_pacer *path;		/* [sources]: a pair's path */
	uint64_t rng;
	int reorder;		/* jitter may reorder packets */
	const struct lgp_dist *dist;	/* NULL: L is the latency */
	uint64_t dist_gen;		/* the caller's: which one dist is */
	struct lgp_dist_rng dist_rng;
	struct wire_stats *stats;	/* the port's, for the histogram */
	uint64_t *pair_pkts;		/* [sources], the caller's: per source,
					 * packets admitted with a pair (NULL:
					 * not counted) */
	uint64_t *pair_latency_ns;	/* [sources]: the pair's latency added */
	uint64_t hist_latency_ns;	/* the latency it was started for */
};

/*
 * cap: largest queue_pkts allowed; sources: ingress ports that may send
 * to it.  Returns 0, -EINVAL or -ENOMEM.
 */
int wire_egress_init(struct wire_egress *e, uint32_t cap, unsigned int sources,
		     uint64_t seed, int reorder);
void wire_egress_fini(struct wire_egress *e);

/*
 * Draw each packet's L from dist (read-only, shared by every port) around
 * the port's latency of the moment, from the stream-th generator of dist,
 * and count each admitted packet's r - d (its drawn delay, raised where
 * order kept it) in the delay histogram of stats->late (lgp_stats_delay();
 * stats may be NULL).  The histogram's buckets span what dist draws around
 * one latency, so a packet admitted under another latency than the last
 * one starts it again, emptied, for the new one (stats->delay_latency_ns),
 * as does the first packet after a new dist; stats->delay_starts counts
 * the starts, so a reader tells a histogram begun again from one grown.
 * A constant (or NULL) dist draws nothing and records nothing (and takes
 * the fields of an earlier one's histogram out of stats).
 */
void wire_egress_set_dist(struct wire_egress *e, const struct lgp_dist *dist,
			  uint64_t stream, struct wire_stats *stats);

/*
 * Shape one packet from ingress port src (< sources), pair the network's
 * delays from src to this port (NULL: no network); on WIRE_ADMIT it is in
 * the delay line with its release time in *release_ns (may be NULL), and
 * with a pair counted in pair_pkts[src] and pair_latency_ns[src].
 */
enum wire_verdict wire_egress_admit(struct wire_egress *e,
				    const struct wire_shape *s,
				    unsigned int src,
				    const struct wire_pair *pair,
				    uint64_t now_ns, void *pkt, uint32_t len,
				    uint64_t *release_ns);

/* Uniform 64-bit pseudo-random numbers (xorshift64*), seeded by splitmix64. */
uint64_t wire_rng_seed(uint64_t seed);
uint64_t wire_rng_next(uint64_t *state);

#endif /* WIRE_EGRESS_H */

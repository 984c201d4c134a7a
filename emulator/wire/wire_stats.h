/* SPDX-License-Identifier: MIT */
/*
 * Per-port counters.  The forwarding lcore is the only writer; the
 * control thread reads them for "stats", /metrics and the exit totals.
 * Single-writer counters need no atomic read-modify-write: the writer
 * stores load+delta with relaxed atomics (a plain mov on x86) and a
 * reader sees some recent value of each counter, never a torn one.
 * Counters of one port are not a consistent snapshot of each other.
 *
 * The port's lateness is lgp_core's account (lgp/stats.h), kept for the
 * packets the port delayed, those whose release time was after their
 * arrival: how long after its release time the loop took each one from
 * the delay line to send it.  Only its lateness fields (LGP_STAT_LATE_FIRST
 * to LGP_STAT_LATE_LAST, and the histogram) are used.  A packet the
 * shaping did not delay (every packet with all knobs at zero) is not
 * counted, so an unshaped port pays one comparison per packet for it.
 */
#ifndef WIRE_STATS_H
#define WIRE_STATS_H

#include <stdint.h>

#include <lgp/dqueue.h>
#include <lgp/stats.h>

/* Upper bounds in microseconds of the added-delay histogram bins. */
#define WIRE_HIST_BINS 6
extern const uint64_t wire_hist_le_us[WIRE_HIST_BINS - 1];

struct wire_stats {
	uint64_t rx_pkts;	/* arrived on this port */
	uint64_t rx_bytes;
	uint64_t tx_pkts;	/* left through this port */
	uint64_t tx_bytes;
	uint64_t drop_queue;	/* tail drops at this port's egress */
	uint64_t drop_loss;	/* random loss at this port's egress */
	uint64_t drop_tx;	/* still held at shutdown */
	uint64_t drop_rx;	/* lost before the wire saw them: the port's
				 * RX ring overflowed (ethdev imissed) or no
				 * mbuf was free (rx_nombuf) */
	uint64_t queue_pkts;	/* delay line depth now */
	uint64_t queue_bytes;
	uint64_t queue_max;	/* deepest the delay line has been */
	uint64_t hist[WIRE_HIST_BINS];	/* added delay, per bin */
	uint64_t delay_sum_ns;
	struct lgp_stats late;	/* lateness of delayed packets, and the
				 * delays drawn from a distribution */
	uint64_t delay_latency_ns;	/* the latency late's delay histogram
					 * is for (wire_egress_set_dist()) */
	uint64_t delay_starts;		/* times it was started (emptied) */
};

static inline void wire_stat_add(uint64_t *c, uint64_t d)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + d,
			 __ATOMIC_RELAXED);
}

static inline void wire_stat_set(uint64_t *c, uint64_t v)
{
	__atomic_store_n(c, v, __ATOMIC_RELAXED);
}

/* Bin of an added delay in ns: 0 for <= 1 us ... WIRE_HIST_BINS-1 above. */
unsigned int wire_hist_bin(uint64_t delay_ns);

/*
 * Record one transmitted packet, taken from the delay line at now_ns (ent:
 * its slot, with the arrival time in stamp_ns): its bytes, the time it was
 * held, and if it was delayed its lateness.
 */
void wire_stats_tx(struct wire_stats *s, const struct lgp_dq_slot *ent,
		   uint64_t now_ns);

/* Copy every counter with relaxed atomic loads (the struct is all uint64_t). */
void wire_stats_read(const struct wire_stats *s, struct wire_stats *out);

#endif /* WIRE_STATS_H */

/* SPDX-License-Identifier: MIT */
/*
 * Per-process shim counters: what was delayed and by how much.
 *
 * Updated with relaxed atomics from any thread (or, by a struct's only
 * writer, with lgp_stats_release_owned()); read with lgp_stats_json()
 * which writes one JSON object on one line, the form the runner parses:
 *   {"pid":..,"provider":"..","msgs":..,"bytes":..,"send_overhead_ns":..,
 *    "recv_overhead_ns":..,"recv_msgs":..,"gap_ns":..,"bulk_gap_ns":..,
 *    "latency_ns":..,"max_queue_depth":..,"eagain":..,"post_errors":..,
 *    "releases":..,"late_ns":..,"late_max_ns":..,"late_over_10us":..,
 *    "early_releases":..,"late_hist_us":[..16 counts..]}
 * and, once lgp_stats_delay_init() has given the buckets a width, the
 * delays drawn from a distribution (lgp/dist.h) as they were applied:
 *    ..,"delay_bucket_ns":W,"delay_hist":[..128 counts..]}
 * bucket k counting delays in [k*W, (k+1)*W), the last bucket the rest.
 *
 * Lateness is the shim's own error: how long after its release time a
 * delayed item was really released (a deferred send handed to the
 * provider, a packet sent by the wire).  Bucket 0 of the histogram counts
 * releases less than 1 us late, bucket k (1..14) those [2^(k-1), 2^k) us
 * late, bucket 15 the rest (16.384 ms and more).  An early release would
 * be a bug: counted apart.  The lateness fields are the run of stats from
 * LGP_STAT_LATE_FIRST to LGP_STAT_LATE_LAST, so a program that keeps only
 * lateness (the wire, per port) can name them with lgp_stat_name().
 */
#ifndef LGP_STATS_H
#define LGP_STATS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum lgp_stat {
	LGP_STAT_MSGS,			/* messages carried by the shimmed provider */
	LGP_STAT_BYTES,
	LGP_STAT_SEND_OVERHEAD_NS,	/* total injected o_s */
	LGP_STAT_RECV_OVERHEAD_NS,	/* total injected o_r */
	LGP_STAT_RECV_MSGS,		/* receive completions handed over */
	LGP_STAT_GAP_NS,		/* total time messages waited for the port */
	LGP_STAT_BULK_GAP_NS,		/* total n*G */
	LGP_STAT_LATENCY_NS,		/* total L added */
	LGP_STAT_MAX_QUEUE_DEPTH,	/* maximum, not a sum */
	LGP_STAT_EAGAIN,		/* sends refused because the queue was full */
	LGP_STAT_POST_ERRORS,		/* deferred sends the provider refused */
	LGP_STAT_RELEASES,		/* delayed items released */
	LGP_STAT_LATE_NS,		/* their total lateness */
	LGP_STAT_LATE_MAX_NS,		/* maximum, not a sum */
	LGP_STAT_LATE_OVER,		/* late by more than LGP_LATE_OVER_NS */
	LGP_STAT_EARLY,			/* released before their time */
	LGP_STAT_COUNT,
	LGP_STAT_LATE_FIRST = LGP_STAT_RELEASES,
	LGP_STAT_LATE_LAST = LGP_STAT_EARLY,
};

#define LGP_LATE_BUCKETS	16
#define LGP_LATE_OVER_NS	10000ULL
#define LGP_DELAY_BUCKETS	128

struct lgp_stats {
	uint64_t v[LGP_STAT_COUNT];
	uint64_t late_hist[LGP_LATE_BUCKETS];
	uint64_t delay_bucket_ns;	/* 0: no delay histogram */
	uint64_t delay_hist[LGP_DELAY_BUCKETS];
};

const char *lgp_stat_name(enum lgp_stat stat);

void lgp_stats_add(struct lgp_stats *s, enum lgp_stat stat, uint64_t delta);

/* Raises the stat to value if value is larger (for maxima). */
void lgp_stats_max(struct lgp_stats *s, enum lgp_stat stat, uint64_t value);

uint64_t lgp_stats_get(const struct lgp_stats *s, enum lgp_stat stat);

/* The histogram bucket of a lateness (see the top of this file). */
unsigned int lgp_late_bucket(uint64_t late_ns);

/*
 * The exclusive upper bound of bucket k in ns (2^k us), UINT64_MAX for the
 * last bucket and beyond.
 */
uint64_t lgp_late_bucket_bound_ns(unsigned int k);

/*
 * Records the release at now_ns of an item whose release time was due_ns:
 * one count, its lateness in the total, the maximum, the over-10us count
 * and the histogram, or one early release.  From any thread.
 */
void lgp_stats_release(struct lgp_stats *s, uint64_t due_ns, uint64_t now_ns);

/*
 * The same record by the only thread that updates s (the wire's lcore for
 * its ports): relaxed loads and stores instead of atomic read-modify-writes,
 * so a release costs no locked instruction.  Readers may read s meanwhile
 * and see each counter untorn.
 */
void lgp_stats_release_owned(struct lgp_stats *s, uint64_t due_ns,
			     uint64_t now_ns);

/*
 * Starts the histogram of drawn delays with buckets wide enough that
 * max_ns, the largest delay the distribution draws, falls in one below the
 * last (which then holds only delays an order-keeping release raised).
 * Before any thread records.
 */
void lgp_stats_delay_init(struct lgp_stats *s, uint64_t max_ns);

/* Counts one applied delay in the histogram, if started; any thread. */
void lgp_stats_delay(struct lgp_stats *s, uint64_t delay_ns);

/*
 * Writes the JSON line (without newline) into buf; provider may be NULL,
 * written as null, and is escaped as a JSON string.  Returns the length
 * that was needed, like snprintf: buf is always terminated when len > 0,
 * and buf may be NULL when len is 0.
 */
int lgp_stats_json(const struct lgp_stats *s, const char *provider,
		   char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* LGP_STATS_H */

/* SPDX-License-Identifier: MIT */
/*
 * Per-process shim counters: what was delayed and by how much.
 *
 * Updated with relaxed atomics from any thread; read with lgp_stats_json()
 * which writes one JSON object on one line, the form the runner parses:
 *   {"pid":..,"provider":"..","msgs":..,"bytes":..,"send_overhead_ns":..,
 *    "recv_overhead_ns":..,"recv_msgs":..,"gap_ns":..,"bulk_gap_ns":..,
 *    "latency_ns":..,"max_queue_depth":..,"eagain":..,"post_errors":..}
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
	LGP_STAT_COUNT
};

struct lgp_stats {
	uint64_t v[LGP_STAT_COUNT];
};

const char *lgp_stat_name(enum lgp_stat stat);

void lgp_stats_add(struct lgp_stats *s, enum lgp_stat stat, uint64_t delta);

/* Raises the stat to value if value is larger (for maxima). */
void lgp_stats_max(struct lgp_stats *s, enum lgp_stat stat, uint64_t value);

uint64_t lgp_stats_get(const struct lgp_stats *s, enum lgp_stat stat);

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

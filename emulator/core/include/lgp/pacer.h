/* SPDX-License-Identifier: MIT */
/*
 * Injection pacing of one port for g and G (docs/design.md, "LogGP
 * semantics"): a message of n bytes that is ready at time t starts leaving
 * at start = max(t, port_free), has fully left at start + n*G, and the
 * port is free again at start + max(g, n*G).  The fabric shim paces each
 * endpoint so; the wire paces each egress port so, with a burst.
 *
 * Burst (the wire's token bucket): with burst_bytes B > 0, the n*G term is
 * a bucket of depth max(B, n) bytes that refills at 1/G bytes per
 * second, so an idle port lets B bytes start at once and the long-run
 * rate is still exactly 1/G.  Written as GCRA: c = n*G,
 * tau = max(B*G, c), start = max(t, tat + c - tau, last_start + g), then
 * tat = max(tat, start) + c.  B = 0 (tau = c) is the strict pacing above.
 *
 * The state is kept in femtoseconds and a start is rounded up to the next
 * nanosecond (never early), so a fractional G such as 0.08 ns/B does not
 * drift over many messages.  Every time saturates at UINT64_MAX instead of
 * wrapping: absurd knobs hold the port "forever", never free it at once.
 *
 * Not thread-safe: the owner serialises calls (the fabric shim's domain
 * lock, the wire's forwarding lcore).
 */
#ifndef LGP_PACER_H
#define LGP_PACER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct lgp_pacer {
	uint64_t gap_ns;
	uint64_t bulk_gap_fs;
	uint64_t burst_bytes;		/* 0: strict pacing */
	unsigned __int128 tat_fs;	/* GCRA theoretical arrival time */
	uint64_t last_start_ns;
	int started;			/* last_start_ns is valid */
};

/* A port that has sent nothing, with burst 0. */
void lgp_pacer_init(struct lgp_pacer *p, uint64_t gap_ns, uint64_t bulk_gap_fs);

/*
 * Changes the knobs and keeps the state: the change applies to messages
 * reserved afterwards (the wire's live settings).
 */
void lgp_pacer_set(struct lgp_pacer *p, uint64_t gap_ns, uint64_t bulk_gap_fs,
		   uint64_t burst_bytes);

/* n * G in nanoseconds, rounded to nearest, saturating at UINT64_MAX. */
uint64_t lgp_bulk_ns(uint64_t bulk_gap_fs, uint64_t nbytes);

/*
 * Reserve the port for a message of nbytes ready at ready_ns; returns the
 * time it starts leaving.
 */
uint64_t lgp_pacer_start(struct lgp_pacer *p, uint64_t ready_ns,
			 uint64_t nbytes);

/*
 * lgp_pacer_start(), returning the time the message has fully left
 * (start + n*G, saturating); stores start in *start_ns if not NULL.
 */
uint64_t lgp_pacer_inject(struct lgp_pacer *p, uint64_t ready_ns,
			  uint64_t nbytes, uint64_t *start_ns);

/*
 * When the port is free: the earliest start of any next message with
 * burst 0; with a burst, that of a message of 0 bytes (one of n bytes
 * starts up to n*G later).  0 before the first message.
 */
uint64_t lgp_pacer_free_ns(const struct lgp_pacer *p);

#ifdef __cplusplus
}
#endif

#endif /* LGP_PACER_H */

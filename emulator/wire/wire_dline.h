/* SPDX-License-Identifier: MIT */
/*
 * The delay line of one egress port: packets waiting for their release
 * time, earliest first, and among equal release times first-in first-out
 * (a min-heap keyed by release time and arrival sequence number).
 *
 * Without jitter reordering release times are pushed in non-decreasing
 * order, so a push costs O(1) and a pop O(log n); the heap only matters
 * when --jitter-reorder lets a later packet overtake an earlier one.
 *
 * The line owns its array, not the packets (pkt is opaque).  Capacity is
 * fixed at init: it is the largest queue_pkts the port can be set to.
 * Only the forwarding lcore touches a line; there is no locking.
 */
#ifndef WIRE_DLINE_H
#define WIRE_DLINE_H

#include <stdint.h>

struct wire_dline_ent {
	uint64_t release_ns;	/* when the packet may leave */
	uint64_t rx_ns;		/* when it arrived, for the delay histogram */
	uint64_t seq;		/* arrival order, breaks ties */
	void *pkt;
	uint32_t len;		/* bytes counted against queue_bytes */
};

struct wire_dline {
	struct wire_dline_ent *heap;
	uint32_t cap;
	uint32_t count;
	uint64_t bytes;
	uint64_t next_seq;
};

/* Returns 0, -EINVAL for a zero capacity or -ENOMEM. */
int wire_dline_init(struct wire_dline *d, uint32_t cap);
void wire_dline_fini(struct wire_dline *d);

/*
 * Insert a new packet; assigns ent->seq.  -ENOSPC if the line holds cap
 * packets (queue limits are checked by the caller, wire_egress.h).
 */
int wire_dline_push(struct wire_dline *d, struct wire_dline_ent *ent);
/* Put back a popped entry with its original seq (TX could not take it). */
int wire_dline_requeue(struct wire_dline *d, const struct wire_dline_ent *ent);
/* Release time of the first packet, UINT64_MAX when empty. */
uint64_t wire_dline_next(const struct wire_dline *d);
/* Remove the first packet into *out; -ENOENT when empty. */
int wire_dline_pop(struct wire_dline *d, struct wire_dline_ent *out);

#endif /* WIRE_DLINE_H */

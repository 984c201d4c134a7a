/* SPDX-License-Identifier: MIT */
/*
 * Delay queue: items ordered by release time, FIFO among equal times.
 *
 * A binary min-heap keyed on (release_ns, insertion sequence), so two items
 * with the same release time leave in the order they entered.  Capacity is
 * fixed at init (a bounded queue models a NIC's finite queue; a full queue
 * is the caller's back-pressure signal): push, pop and requeue never
 * allocate and take no lock, so one thread may run it at line rate.  Not
 * thread-safe: the owner serialises calls (the fabric shim's domain lock,
 * the wire's single forwarding lcore).
 *
 * Items are the caller's; the queue never dereferences or frees them.
 * Each slot also carries two values of the caller's, unchanged: stamp_ns
 * (the wire: when the packet arrived) and bytes (the size the caller
 * counts against its limits; their sum is lgp_dq_bytes()).
 * An item released at UINT64_MAX is indistinguishable from "empty" in
 * lgp_dq_next() but is still popped by lgp_dq_pop_due(q, UINT64_MAX).
 */
#ifndef LGP_DQUEUE_H
#define LGP_DQUEUE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct lgp_dq_slot {
	uint64_t release_ns;
	uint64_t seq;		/* insertion order, assigned by the queue */
	void *item;
	uint64_t stamp_ns;	/* the caller's, carried unchanged */
	uint64_t bytes;		/* the caller's, summed in lgp_dq_bytes() */
};

struct lgp_dq {
	struct lgp_dq_slot *heap;
	size_t capacity;
	size_t size;
	size_t max_depth;	/* high-water mark since init */
	uint64_t next_seq;
	uint64_t bytes;		/* sum of the queued slots' bytes */
};

/*
 * Returns 0, -EINVAL for capacity 0, or -ENOMEM.  lgp_dq_fini() is safe
 * after a failed init and leaves the queue zeroed.
 */
int lgp_dq_init(struct lgp_dq *q, size_t capacity);
void lgp_dq_fini(struct lgp_dq *q);

/*
 * Returns 0, -EAGAIN when the queue is full, or -EINVAL for a NULL item
 * (NULL is lgp_dq_pop_due()'s "nothing due").  Its stamp and bytes are 0.
 */
int lgp_dq_push(struct lgp_dq *q, uint64_t release_ns, void *item);

/*
 * lgp_dq_push() of s->item at s->release_ns with s->stamp_ns and s->bytes;
 * stores the insertion sequence it was given in s->seq.  Same returns.
 */
int lgp_dq_push_slot(struct lgp_dq *q, struct lgp_dq_slot *s);

/*
 * Puts back a slot that lgp_dq_pop() took from this queue, with its
 * original sequence, so it regains its place before every item pushed
 * after it (a transmitter that could not take a popped item keeps it
 * first).  Returns 0 or -EAGAIN when the queue is full.
 */
int lgp_dq_requeue(struct lgp_dq *q, const struct lgp_dq_slot *s);

/* Pops the earliest item if its release time is <= now_ns, else NULL. */
void *lgp_dq_pop_due(struct lgp_dq *q, uint64_t now_ns);

/* Pops the earliest slot into *out, due or not; -EAGAIN when empty. */
int lgp_dq_pop(struct lgp_dq *q, struct lgp_dq_slot *out);

/* The earliest slot, left in place; NULL when empty. */
static inline const struct lgp_dq_slot *lgp_dq_head(const struct lgp_dq *q)
{
	return q->size ? &q->heap[0] : NULL;
}

/* Earliest release time, or UINT64_MAX when empty. */
static inline uint64_t lgp_dq_next(const struct lgp_dq *q)
{
	return q->size ? q->heap[0].release_ns : UINT64_MAX;
}

static inline size_t lgp_dq_size(const struct lgp_dq *q) { return q->size; }
static inline int lgp_dq_full(const struct lgp_dq *q) { return q->size == q->capacity; }
static inline uint64_t lgp_dq_bytes(const struct lgp_dq *q) { return q->bytes; }

#ifdef __cplusplus
}
#endif

#endif /* LGP_DQUEUE_H */

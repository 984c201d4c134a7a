/* SPDX-License-Identifier: MIT */
/*
 * Delay queue: items ordered by release time, FIFO among equal times.
 *
 * A binary min-heap keyed on (release_ns, insertion sequence), so two items
 * with the same release time leave in the order they entered.  Capacity is
 * fixed at init (a bounded queue models a NIC's finite queue; a full queue
 * is the caller's back-pressure signal).  Not thread-safe.
 *
 * Items are the caller's; the queue never dereferences or frees them.
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
	uint64_t seq;
	void *item;
};

struct lgp_dq {
	struct lgp_dq_slot *heap;
	size_t capacity;
	size_t size;
	size_t max_depth;	/* high-water mark since init */
	uint64_t next_seq;
};

/*
 * Returns 0, -EINVAL for capacity 0, or -ENOMEM.  lgp_dq_fini() is safe
 * after a failed init and leaves the queue zeroed.
 */
int lgp_dq_init(struct lgp_dq *q, size_t capacity);
void lgp_dq_fini(struct lgp_dq *q);

/*
 * Returns 0, -EAGAIN when the queue is full, or -EINVAL for a NULL item
 * (NULL is lgp_dq_pop_due()'s "nothing due").
 */
int lgp_dq_push(struct lgp_dq *q, uint64_t release_ns, void *item);

/* Earliest release time, or UINT64_MAX when empty. */
uint64_t lgp_dq_next(const struct lgp_dq *q);

/* Pops the earliest item if its release time is <= now_ns, else NULL. */
void *lgp_dq_pop_due(struct lgp_dq *q, uint64_t now_ns);

static inline size_t lgp_dq_size(const struct lgp_dq *q) { return q->size; }
static inline int lgp_dq_full(const struct lgp_dq *q) { return q->size == q->capacity; }

#ifdef __cplusplus
}
#endif

#endif /* LGP_DQUEUE_H */

/* SPDX-License-Identifier: MIT */
/*
 * Delay queue (dqueue.h): a binary min-heap in one array allocated at
 * init, so push and pop never allocate on the send path.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lgp/dqueue.h"

/* Strict order on (release time, insertion sequence); never equal. */
static int dq_before(const struct lgp_dq_slot *a, const struct lgp_dq_slot *b)
{
	if (a->release_ns != b->release_ns)
		return a->release_ns < b->release_ns;
	return a->seq < b->seq;
}

static void dq_sift_up(struct lgp_dq *q, size_t i)
{
	struct lgp_dq_slot s = q->heap[i];
	size_t parent;

	while (i > 0) {
		parent = (i - 1) / 2;
		if (!dq_before(&s, &q->heap[parent]))
			break;
		q->heap[i] = q->heap[parent];
		i = parent;
	}
	q->heap[i] = s;
}

static void dq_sift_down(struct lgp_dq *q, size_t i)
{
	struct lgp_dq_slot s = q->heap[i];
	size_t child;

	for (;;) {
		child = 2 * i + 1;
		if (child >= q->size)
			break;
		if (child + 1 < q->size &&
		    dq_before(&q->heap[child + 1], &q->heap[child]))
			child++;
		if (!dq_before(&q->heap[child], &s))
			break;
		q->heap[i] = q->heap[child];
		i = child;
	}
	q->heap[i] = s;
}

int lgp_dq_init(struct lgp_dq *q, size_t capacity)
{
	memset(q, 0, sizeof(*q));
	if (!capacity)
		return -EINVAL;
	q->heap = calloc(capacity, sizeof(*q->heap));
	if (!q->heap)
		return -ENOMEM;
	q->capacity = capacity;
	return 0;
}

void lgp_dq_fini(struct lgp_dq *q)
{
	free(q->heap);
	memset(q, 0, sizeof(*q));
}

int lgp_dq_push(struct lgp_dq *q, uint64_t release_ns, void *item)
{
	struct lgp_dq_slot *s;

	if (!item)
		return -EINVAL;
	if (q->size == q->capacity)
		return -EAGAIN;
	s = &q->heap[q->size];
	s->release_ns = release_ns;
	s->seq = q->next_seq++;
	s->item = item;
	dq_sift_up(q, q->size++);
	if (q->size > q->max_depth)
		q->max_depth = q->size;
	return 0;
}

uint64_t lgp_dq_next(const struct lgp_dq *q)
{
	return q->size ? q->heap[0].release_ns : UINT64_MAX;
}

void *lgp_dq_pop_due(struct lgp_dq *q, uint64_t now_ns)
{
	void *item;

	if (!q->size || q->heap[0].release_ns > now_ns)
		return NULL;
	item = q->heap[0].item;
	if (--q->size) {
		q->heap[0] = q->heap[q->size];
		dq_sift_down(q, 0);
	}
	return item;
}

/* SPDX-License-Identifier: MIT */
/*
 * Delay queue (dqueue.h): a binary min-heap in one array allocated at
 * init, so push, pop and requeue never allocate on the send path.  Sifts
 * move a hole rather than swapping, one slot copy per level.
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

/* Inserts a slot whose seq is set; the queue has room. */
static void dq_insert(struct lgp_dq *q, const struct lgp_dq_slot *s)
{
	q->heap[q->size] = *s;
	q->bytes += s->bytes;
	dq_sift_up(q, q->size++);
	if (q->size > q->max_depth)
		q->max_depth = q->size;
}

int lgp_dq_push_slot(struct lgp_dq *q, struct lgp_dq_slot *s)
{
	if (!s->item)
		return -EINVAL;
	if (q->size == q->capacity)
		return -EAGAIN;
	s->seq = q->next_seq++;
	dq_insert(q, s);
	return 0;
}

int lgp_dq_push(struct lgp_dq *q, uint64_t release_ns, void *item)
{
	struct lgp_dq_slot s = { .release_ns = release_ns, .item = item };

	return lgp_dq_push_slot(q, &s);
}

int lgp_dq_requeue(struct lgp_dq *q, const struct lgp_dq_slot *s)
{
	if (q->size == q->capacity)
		return -EAGAIN;
	dq_insert(q, s);
	return 0;
}

/* Removes the head; the queue is not empty. */
static void dq_remove_head(struct lgp_dq *q)
{
	q->bytes -= q->heap[0].bytes;
	if (--q->size) {
		q->heap[0] = q->heap[q->size];
		dq_sift_down(q, 0);
	}
}

void *lgp_dq_pop_due(struct lgp_dq *q, uint64_t now_ns)
{
	void *item;

	if (!q->size || q->heap[0].release_ns > now_ns)
		return NULL;
	item = q->heap[0].item;
	dq_remove_head(q);
	return item;
}

int lgp_dq_pop(struct lgp_dq *q, struct lgp_dq_slot *out)
{
	if (!q->size)
		return -EAGAIN;
	*out = q->heap[0];
	dq_remove_head(q);
	return 0;
}

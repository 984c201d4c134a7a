/* SPDX-License-Identifier: MIT */
/* Delay line: a min-heap on (release_ns, seq) (see wire_dline.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wire_dline.h"

int wire_dline_init(struct wire_dline *d, uint32_t cap)
{
	memset(d, 0, sizeof(*d));
	if (!cap)
		return -EINVAL;
	d->heap = calloc(cap, sizeof(*d->heap));
	if (!d->heap)
		return -ENOMEM;
	d->cap = cap;
	d->next_seq = 1;
	return 0;
}

void wire_dline_fini(struct wire_dline *d)
{
	free(d->heap);
	memset(d, 0, sizeof(*d));
}

static int wire_dline_before(const struct wire_dline_ent *a,
			     const struct wire_dline_ent *b)
{
	if (a->release_ns != b->release_ns)
		return a->release_ns < b->release_ns;
	return a->seq < b->seq;
}

static void wire_dline_swap(struct wire_dline *d, uint32_t i, uint32_t j)
{
	struct wire_dline_ent t = d->heap[i];

	d->heap[i] = d->heap[j];
	d->heap[j] = t;
}

int wire_dline_requeue(struct wire_dline *d, const struct wire_dline_ent *ent)
{
	uint32_t i, parent;

	if (d->count == d->cap)
		return -ENOSPC;
	i = d->count++;
	d->heap[i] = *ent;
	d->bytes += ent->len;
	while (i) {
		parent = (i - 1) / 2;
		if (!wire_dline_before(&d->heap[i], &d->heap[parent]))
			break;
		wire_dline_swap(d, i, parent);
		i = parent;
	}
	return 0;
}

int wire_dline_push(struct wire_dline *d, struct wire_dline_ent *ent)
{
	if (d->count == d->cap)
		return -ENOSPC;
	ent->seq = d->next_seq++;
	return wire_dline_requeue(d, ent);
}

uint64_t wire_dline_next(const struct wire_dline *d)
{
	return d->count ? d->heap[0].release_ns : UINT64_MAX;
}

int wire_dline_pop(struct wire_dline *d, struct wire_dline_ent *out)
{
	uint32_t i = 0, l, r, m;

	if (!d->count)
		return -ENOENT;
	*out = d->heap[0];
	d->bytes -= out->len;
	d->heap[0] = d->heap[--d->count];
	for (;;) {
		l = 2 * i + 1;
		r = l + 1;
		m = i;
		if (l < d->count && wire_dline_before(&d->heap[l], &d->heap[m]))
			m = l;
		if (r < d->count && wire_dline_before(&d->heap[r], &d->heap[m]))
			m = r;
		if (m == i)
			break;
		wire_dline_swap(d, i, m);
		i = m;
	}
	return 0;
}

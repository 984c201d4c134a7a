/* window.c: the LRU window of one file (pf_window.h). */
#include "pf_window.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int pf_window_init(struct pf_window *w, struct pf_plan *plan, uint32_t cap)
{
	memset(w, 0, sizeof(*w));
	memset(plan, 0, sizeof(*plan));
	w->cap = cap;
	w->blocks = calloc(cap, sizeof(*w->blocks));
	plan->fetch = calloc(cap, sizeof(*plan->fetch));
	plan->release = calloc(cap, sizeof(*plan->release));
	if (!w->blocks || !plan->fetch || !plan->release) {
		pf_window_fini(w, plan);
		return -ENOMEM;
	}
	return 0;
}

void pf_window_fini(struct pf_window *w, struct pf_plan *plan)
{
	free(w->blocks);
	free(plan->fetch);
	free(plan->release);
	w->blocks = NULL;
	plan->fetch = plan->release = NULL;
}

static const struct pf_hint *willneed_at(const struct pf_entry *e, uint64_t size, uint64_t off,
					 uint64_t *end)
{
	for (size_t i = 0; i < e->nhints; i++) {
		const struct pf_hint *h = &e->hints[i];
		uint64_t hend = h->len ? h->off + h->len : size;
		if (h->kind == PF_WILLNEED && off >= h->off && off < hend) {
			*end = hend < size ? hend : size;
			return h;
		}
	}
	return NULL;
}

int pf_window_range(const struct pf_entry *e, uint64_t size, uint64_t off, uint64_t *lo,
		    uint64_t *hi)
{
	uint64_t end;
	const struct pf_hint *h = willneed_at(e, size, off, &end);
	int any = 0;
	for (size_t i = 0; i < e->nhints; i++)
		any |= e->hints[i].kind == PF_WILLNEED;
	if (!any && off < size) {
		*lo = 0;
		*hi = size;
		return 1;
	}
	if (!h)
		return 0;
	*lo = h->off;
	*hi = end;
	return 1;
}

/* Makes b the most recently used; 1 if it was already in the window. */
static int touch(struct pf_window *w, uint64_t b)
{
	for (uint32_t i = 0; i < w->n; i++) {
		if (w->blocks[i] != b)
			continue;
		memmove(&w->blocks[i], &w->blocks[i + 1], (w->n - i - 1) * sizeof(*w->blocks));
		w->blocks[w->n - 1] = b;
		return 1;
	}
	return 0;
}

enum pf_verdict pf_window_access(struct pf_window *w, struct pf_plan *plan,
				 const struct pf_entry *e, uint64_t size, uint64_t off,
				 uint64_t len)
{
	uint64_t bs = e->block_size, end;
	plan->nfetch = plan->nrelease = 0;
	const struct pf_hint *h = willneed_at(e, size, off, &end);
	if (!h)
		return PF_OUTSIDE;
	if (len > bs)
		return PF_OVERSIZED;
	uint64_t first = off / bs;
	uint64_t last = (end - 1) / bs;
	if (last > first + e->readahead)
		last = first + e->readahead;
	/* Blocks held become the most recent first, so that making room for
	 * the others never releases a block of this request. */
	for (uint64_t b = first; b <= last; b++)
		if (!touch(w, b))
			plan->fetch[plan->nfetch++].off = b;
	for (uint32_t i = 0; i < plan->nfetch; i++) {
		uint64_t b = plan->fetch[i].off;
		if (w->n == w->cap) {
			uint64_t old = w->blocks[0];
			memmove(&w->blocks[0], &w->blocks[1], (w->n - 1) * sizeof(*w->blocks));
			w->n--;
			plan->release[plan->nrelease++] = (struct pf_extent){old * bs, bs};
		}
		w->blocks[w->n++] = b;
		uint64_t lo = b * bs > h->off ? b * bs : h->off;
		uint64_t hi = (b + 1) * bs < end ? (b + 1) * bs : end;
		plan->fetch[i] = (struct pf_extent){lo, hi - lo};
	}
	if (w->n > w->max)
		w->max = w->n;
	return PF_PLANNED;
}

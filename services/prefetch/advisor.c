/* advisor.c: one file's advisor (pf_advisor.h). */
#include "pf_advisor.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pf_adapt.h"
#include "pf_window.h"

#define PF_QUEUE 256	/* requests waiting for a threaded advisor */

struct pf_advisor {
	struct pf_entry entry;	/* own copy of the hints */
	const struct pf_backend_ops *ops;
	void *ctx;
	uint64_t size;
	struct pf_counters *cnt;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct pf_window win;
	struct pf_plan plan;
	struct pf_adapt *ad;	/* adaptive read-ahead; NULL: Mercury's blocks */
	struct pf_extent q[PF_QUEUE];
	unsigned head, count;
	int threaded, stop, detached;
	pthread_t thread;
};

static void max_update(atomic_uint *m, unsigned v)
{
	unsigned cur = atomic_load(m);
	while (v > cur && !atomic_compare_exchange_weak(m, &cur, v))
		;
}

/* Releases first, so the bytes held never exceed the budget. */
static void apply(struct pf_advisor *a, const struct pf_extent *rel, uint32_t nrel,
		  const struct pf_extent *fetch, uint32_t nfetch, unsigned held)
{
	for (uint32_t i = 0; i < nrel; i++)
		a->ops->release(a->ctx, rel[i].off, rel[i].len);
	for (uint32_t i = 0; i < nfetch; i++)
		a->ops->fetch(a->ctx, fetch[i].off, fetch[i].len);
	atomic_fetch_add(&a->cnt->released, nrel);
	atomic_fetch_add(&a->cnt->fetched, nfetch);
	max_update(&a->cnt->window_max, held);
}

/* Under a->lock. */
static void advise(struct pf_advisor *a, uint64_t off, uint64_t len)
{
	uint64_t lo, hi;
	if (a->detached)
		return;
	atomic_fetch_add(&a->cnt->requests, 1);
	if (a->ad) {
		if (!pf_window_range(&a->entry, a->size, off, &lo, &hi))
			return;
		pf_adapt_access(a->ad, lo, hi, off, len);
		apply(a, a->ad->release, a->ad->nrelease, a->ad->fetch, a->ad->nfetch,
		      a->ad->nheld);
		return;
	}
	enum pf_verdict v = pf_window_access(&a->win, &a->plan, &a->entry, a->size, off, len);
	if (v == PF_OVERSIZED)
		atomic_fetch_add(&a->cnt->oversized, 1);
	if (v == PF_PLANNED)
		apply(a, a->plan.release, a->plan.nrelease, a->plan.fetch, a->plan.nfetch,
		      a->win.max);
}

/* Adaptive read-ahead within CacheSize blocks' bytes, a block at most per
 * fetch; 0 or -ENOMEM.  Under a->lock or before the advisor runs. */
static int go_adaptive(struct pf_advisor *a)
{
	if (a->ad)
		return 0;
	if (!(a->ad = malloc(sizeof(*a->ad))))
		return -ENOMEM;
	pf_adapt_init(a->ad, (uint64_t)a->entry.cache_size * a->entry.block_size,
		      a->entry.block_size);
	return 0;
}

static void *run(void *arg)
{
	struct pf_advisor *a = arg;
	pthread_mutex_lock(&a->lock);
	for (;;) {
		while (!a->count && !a->stop)
			pthread_cond_wait(&a->cond, &a->lock);
		if (!a->count)
			break;
		struct pf_extent r = a->q[a->head];
		a->head = (a->head + 1) % PF_QUEUE;
		a->count--;
		advise(a, r.off, r.len);
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

static void free_advisor(struct pf_advisor *a)
{
	free(a->ad);
	pf_window_fini(&a->win, &a->plan);
	free(a->entry.hints);
	free(a);
}

struct pf_advisor *pf_advisor_open(const struct pf_entry *e, const struct pf_backend_ops *ops,
				   int fd, const char *path, int threaded,
				   struct pf_counters *cnt, char *err, size_t errlen)
{
	struct pf_advisor *a = calloc(1, sizeof(*a));
	if (!a) {
		snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	a->entry = *e;
	a->entry.path = NULL;
	a->entry.hints = calloc(e->nhints + 1, sizeof(*e->hints));
	if (!a->entry.hints || pf_window_init(&a->win, &a->plan, e->cache_size) < 0 ||
	    (e->adaptive && go_adaptive(a) < 0)) {
		snprintf(err, errlen, "%s: out of memory", path);
		free_advisor(a);
		return NULL;
	}
	memcpy(a->entry.hints, e->hints, e->nhints * sizeof(*e->hints));
	a->ops = ops;
	a->cnt = cnt;
	a->threaded = threaded;
	if (ops->open(&a->ctx, fd, path, &a->size, cnt, err, errlen) < 0) {
		free_advisor(a);
		return NULL;
	}
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->cond, NULL);
	/* WillNeed first (random reads: no kernel read-ahead), then the rest. */
	for (size_t i = 0; i < e->nhints; i++)
		if (e->hints[i].kind == PF_WILLNEED) {
			ops->advise(a->ctx, PF_WILLNEED, 0, 0);
			break;
		}
	for (size_t i = 0; i < e->nhints; i++)
		if (e->hints[i].kind != PF_WILLNEED)
			ops->advise(a->ctx, e->hints[i].kind, e->hints[i].off, e->hints[i].len);
	if (threaded && pthread_create(&a->thread, NULL, run, a) != 0) {
		snprintf(err, errlen, "%s: cannot start an advisor thread", path);
		ops->close(a->ctx);
		free_advisor(a);
		return NULL;
	}
	atomic_fetch_add(&cnt->files, 1);
	return a;
}

void pf_advisor_request(struct pf_advisor *a, uint64_t off, uint64_t len)
{
	pthread_mutex_lock(&a->lock);
	if (!a->threaded) {
		advise(a, off, len);
	} else if (a->count == PF_QUEUE) {
		atomic_fetch_add(&a->cnt->dropped, 1);
	} else {
		a->q[(a->head + a->count) % PF_QUEUE] = (struct pf_extent){off, len};
		a->count++;
		pthread_cond_signal(&a->cond);
	}
	pthread_mutex_unlock(&a->lock);
}

void pf_advisor_sequential(struct pf_advisor *a)
{
	pthread_mutex_lock(&a->lock);
	if (!a->ad && go_adaptive(a) == 0) {
		/* the window's blocks leave: the adaptive budget is all there is */
		for (uint32_t i = 0; i < a->win.n; i++)
			a->ops->release(a->ctx, a->win.blocks[i] * a->entry.block_size,
					a->entry.block_size);
		atomic_fetch_add(&a->cnt->released, a->win.n);
		a->win.n = 0;
	} else if (!a->ad) {
		a->detached = 1;	/* no memory to read ahead with: leave it be */
	}
	pthread_mutex_unlock(&a->lock);
}

void pf_advisor_detach(struct pf_advisor *a)
{
	pthread_mutex_lock(&a->lock);
	a->detached = 1;
	pthread_mutex_unlock(&a->lock);
}

void pf_advisor_close(struct pf_advisor *a)
{
	if (a->threaded) {
		pthread_mutex_lock(&a->lock);
		a->stop = 1;
		pthread_cond_signal(&a->cond);
		pthread_mutex_unlock(&a->lock);
		pthread_join(a->thread, NULL);
	}
	a->ops->close(a->ctx);
	pthread_mutex_destroy(&a->lock);
	pthread_cond_destroy(&a->cond);
	free_advisor(a);
}

int pf_counters_json(const struct pf_counters *c, char *buf, size_t len)
{
	return snprintf(buf, len,
			"\"files\":%lu,\"requests\":%lu,\"fetched\":%lu,\"released\":%lu,"
			"\"oversized\":%lu,\"dropped\":%lu,\"errors\":%lu,\"window_max\":%u,"
			"\"served\":%lu,\"missed\":%lu,\"store_reads\":%lu,"
			"\"store_bytes\":%lu,\"cache_max\":%u",
			atomic_load(&c->files), atomic_load(&c->requests),
			atomic_load(&c->fetched), atomic_load(&c->released),
			atomic_load(&c->oversized), atomic_load(&c->dropped),
			atomic_load(&c->errors), atomic_load(&c->window_max),
			atomic_load(&c->served), atomic_load(&c->missed),
			atomic_load(&c->store_reads), atomic_load(&c->store_bytes),
			atomic_load(&c->cache_max));
}

ssize_t pf_advisor_serve(struct pf_advisor *a, void *buf, uint64_t off, uint64_t len)
{
	if (!a->ops->serve)
		return -1;
	ssize_t n = a->ops->serve(a->ctx, buf, off, len);
	atomic_fetch_add(n >= 0 ? &a->cnt->served : &a->cnt->missed, 1);
	return n;
}

int pf_advisor_serves(const struct pf_advisor *a)
{
	return a->ops->serve != NULL;
}

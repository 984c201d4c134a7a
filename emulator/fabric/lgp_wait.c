/* SPDX-License-Identifier: MIT */
/*
 * Wait set wrapper.  A wait set wakes when a member has something to
 * read; the shim's synthesised completions are such things too.  Their
 * CQs signal the real wait set when they fall due (lgp_domain_signal),
 * and fi_wait checks them first, so a completion that fell due before the
 * call does not wait for the next real event.
 */
#include <stdlib.h>

#include <rdma/fi_domain.h>

#include <lgp/clock.h>

#include "lgp_cq.h"
#include "lgp_fabric.h"
#include "lgp_fid.h"
#include "lgp_wait.h"

/* Longest single block in the real wait, so a lost wake-up costs little. */
#define LGP_WAIT_SLICE_MS	100

static struct lgp_wait *lgp_wait_of(struct fid_wait *w)
{
	return lgp_container_of(w, struct lgp_wait, wait);
}

void lgp_wait_add_cq(struct lgp_wait *w, struct lgp_cq *cq)
{
	pthread_mutex_lock(&w->lock);
	cq->next_in_wait = w->cqs;
	w->cqs = cq;
	pthread_mutex_unlock(&w->lock);
}

void lgp_wait_del_cq(struct lgp_wait *w, struct lgp_cq *cq)
{
	struct lgp_cq **p;

	pthread_mutex_lock(&w->lock);
	for (p = &w->cqs; *p; p = &(*p)->next_in_wait) {
		if (*p == cq) {
			*p = cq->next_in_wait;
			break;
		}
	}
	pthread_mutex_unlock(&w->lock);
}

/*
 * Whether a member CQ has a due synthesised completion; otherwise *next
 * is the earliest one still to come (UINT64_MAX: none).
 */
static bool lgp_wait_ready(struct lgp_wait *w, uint64_t *next)
{
	struct lgp_cq *cq;
	uint64_t t;
	bool ready = false;

	*next = UINT64_MAX;
	pthread_mutex_lock(&w->lock);
	for (cq = w->cqs; cq && !ready; cq = cq->next_in_wait) {
		ready = lgp_cq_ready(cq, &t);
		if (t < *next)
			*next = t;
	}
	pthread_mutex_unlock(&w->lock);
	return ready;
}

bool lgp_wait_set_ready(struct lgp_wait *w)
{
	uint64_t next;

	return lgp_wait_ready(w, &next);
}

static int lgp_wait_wait(struct fid_wait *fw, int timeout)
{
	struct lgp_wait *w = lgp_wait_of(fw);
	uint64_t deadline, now, next, until;
	int ret, slice;

	deadline = timeout < 0 ? UINT64_MAX :
		   lgp_now_ns() + (uint64_t) timeout * 1000000ULL;
	for (;;) {
		if (lgp_wait_ready(w, &next))
			return 0;
		now = lgp_now_ns();
		if (now >= deadline)
			return -FI_ETIMEDOUT;
		until = next < deadline ? next : deadline;
		slice = until == UINT64_MAX ? LGP_WAIT_SLICE_MS :
			(int) ((until - now + 999999ULL) / 1000000ULL);
		if (slice > LGP_WAIT_SLICE_MS)
			slice = LGP_WAIT_SLICE_MS;
		ret = fi_wait(w->hwait, slice);
		if (ret != -FI_ETIMEDOUT && ret != -FI_EAGAIN)
			return ret;
	}
}

static struct fi_ops_wait lgp_wait_ops = {
	.size = sizeof(struct fi_ops_wait),
	.wait = lgp_wait_wait,
};

static int lgp_wait_close(struct fid *fid)
{
	struct lgp_wait *w = lgp_container_of(fid, struct lgp_wait, wait.fid);
	int ret;

	ret = fi_close(&w->hwait->fid);
	if (ret)
		return ret;
	pthread_mutex_destroy(&w->lock);
	free(w);
	return 0;
}

struct fi_ops lgp_wait_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lgp_wait_close,
	.bind = lgp_fid_bind,
	.control = lgp_fid_control,
	.ops_open = lgp_fid_ops_open,
	.tostr = lgp_fid_tostr,
	.ops_set = lgp_fid_ops_set,
};

int lgp_wait_open(struct lgp_fabric *fab, struct fi_wait_attr *attr,
		  struct fid_wait **out)
{
	struct lgp_wait *w;
	int ret;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -FI_ENOMEM;
	ret = fi_wait_open(fab->hfabric, attr, &w->hwait);
	if (ret) {
		free(w);
		return ret;
	}
	pthread_mutex_init(&w->lock, NULL);
	w->wait.fid.fclass = FI_CLASS_WAIT;
	w->wait.fid.context = w->hwait->fid.context;
	w->wait.fid.ops = &lgp_wait_fi_ops;
	w->wait.ops = &lgp_wait_ops;
	*out = &w->wait;
	return 0;
}

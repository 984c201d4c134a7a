/* SPDX-License-Identifier: MIT */
/*
 * Poll set wrapper.  Members are added to the real poll set as real
 * objects, whose contexts are the application's.  CQs whose completions
 * the shim synthesises are also kept here: fi_poll reports them when a
 * synthesised completion is due, as the provider reports its own.
 */
#include <stdlib.h>

#include "lgp_cq.h"
#include "lgp_domain.h"
#include "lgp_fid.h"
#include "lgp_poll.h"

static struct lgp_poll *lgp_poll_of(struct fid_poll *p)
{
	return lgp_container_of(p, struct lgp_poll, poll);
}

static int lgp_poll_close(struct fid *fid)
{
	struct lgp_poll *p = lgp_container_of(fid, struct lgp_poll, poll.fid);
	int ret;

	ret = fi_close(&p->hpoll->fid);
	if (ret)
		return ret;
	pthread_mutex_destroy(&p->lock);
	free(p);
	return 0;
}

struct fi_ops lgp_poll_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lgp_poll_close,
	.bind = lgp_fid_bind,
	.control = lgp_fid_control,
	.ops_open = lgp_fid_ops_open,
	.tostr = lgp_fid_tostr,
	.ops_set = lgp_fid_ops_set,
};

static bool lgp_poll_has(void **context, int n, void *ctx)
{
	int i;

	for (i = 0; i < n; i++)
		if (context[i] == ctx)
			return true;
	return false;
}

static int lgp_poll_poll(struct fid_poll *pollset, void **context, int count)
{
	struct lgp_poll *p = lgp_poll_of(pollset);
	void *real[LGP_SET_MAX];
	int n = 0, got, i;
	size_t k;

	pthread_mutex_lock(&p->lock);
	for (k = 0; k < p->ncqs && n < count; k++)
		if (lgp_cq_ready(p->cqs[k], NULL))
			context[n++] = p->cqs[k]->cq.fid.context;
	pthread_mutex_unlock(&p->lock);
	if (n == count)
		return n;
	got = fi_poll(p->hpoll, real, count - n < LGP_SET_MAX ?
		      count - n : LGP_SET_MAX);
	if (got < 0)
		return n ? n : got;
	/* A CQ may be ready in both ways: report it once. */
	for (i = 0; i < got && n < count; i++)
		if (!lgp_poll_has(context, n, real[i]))
			context[n++] = real[i];
	return n;
}

static int lgp_poll_add(struct fid_poll *pollset, struct fid *event_fid,
			uint64_t flags)
{
	struct lgp_poll *p = lgp_poll_of(pollset);
	struct lgp_cq *cq = NULL;
	int ret;

	if (event_fid->ops == &lgp_cq_fi_ops)
		cq = lgp_container_of(event_fid, struct lgp_cq, cq.fid);
	if (cq && !cq->shim)
		cq = NULL;
	pthread_mutex_lock(&p->lock);
	if (cq && p->ncqs == LGP_SET_MAX)
		ret = -FI_ENOSPC;
	else
		ret = fi_poll_add(p->hpoll, lgp_fid_real(event_fid), flags);
	if (!ret && cq)
		p->cqs[p->ncqs++] = cq;
	pthread_mutex_unlock(&p->lock);
	return ret;
}

static int lgp_poll_del(struct fid_poll *pollset, struct fid *event_fid,
			uint64_t flags)
{
	struct lgp_poll *p = lgp_poll_of(pollset);
	size_t k;
	int ret;

	pthread_mutex_lock(&p->lock);
	ret = fi_poll_del(p->hpoll, lgp_fid_real(event_fid), flags);
	for (k = 0; !ret && k < p->ncqs; k++) {
		if (&p->cqs[k]->cq.fid == event_fid) {
			p->cqs[k] = p->cqs[--p->ncqs];
			break;
		}
	}
	pthread_mutex_unlock(&p->lock);
	return ret;
}

static struct fi_ops_poll lgp_poll_ops = {
	.size = sizeof(struct fi_ops_poll),
	.poll = lgp_poll_poll,
	.poll_add = lgp_poll_add,
	.poll_del = lgp_poll_del,
};

int lgp_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
		  struct fid_poll **out)
{
	struct lgp_domain *dom = lgp_container_of(domain, struct lgp_domain, domain);
	struct lgp_poll *p;
	int ret;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -FI_ENOMEM;
	ret = fi_poll_open(dom->hdomain, attr, &p->hpoll);
	if (ret) {
		free(p);
		return ret;
	}
	pthread_mutex_init(&p->lock, NULL);
	p->poll.fid.fclass = FI_CLASS_POLL;
	p->poll.fid.ops = &lgp_poll_fi_ops;
	p->poll.ops = &lgp_poll_ops;
	*out = &p->poll;
	return 0;
}

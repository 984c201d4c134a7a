/* SPDX-License-Identifier: MIT */
/*
 * Poll set wrapper.  Members are added to the real poll set as real
 * objects, whose contexts are the application's, except CQs whose
 * completions the shim synthesises: those are kept here only, and fi_poll
 * reports one when the application's read would return something
 * (lgp_cq_has_news).  The real poll set would report such a CQ whenever
 * its real CQ holds an entry, and that may be only the completion of a
 * deferred post of the shim's, which no read returns: with selective
 * completion, a send the application asked no completion for.
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

static int lgp_poll_poll(struct fid_poll *pollset, void **context, int count)
{
	struct lgp_poll *p = lgp_poll_of(pollset);
	int n = 0, got;
	size_t k;

	pthread_mutex_lock(&p->lock);
	for (k = 0; k < p->ncqs && n < count; k++)
		if (lgp_cq_has_news(p->cqs[k]))
			context[n++] = p->cqs[k]->cq.fid.context;
	pthread_mutex_unlock(&p->lock);
	if (n == count)
		return n;
	got = fi_poll(p->hpoll, context + n, count - n);
	if (got < 0)
		return n ? n : got;
	return n + got;
}

/* The shim's CQ a member is, or NULL for one the real set holds. */
static struct lgp_cq *lgp_poll_shim_cq(struct fid *fid)
{
	struct lgp_cq *cq;

	if (fid->ops != &lgp_cq_fi_ops)
		return NULL;
	cq = lgp_container_of(fid, struct lgp_cq, cq.fid);
	return cq->shim ? cq : NULL;
}

static int lgp_poll_add(struct fid_poll *pollset, struct fid *event_fid,
			uint64_t flags)
{
	struct lgp_poll *p = lgp_poll_of(pollset);
	struct lgp_cq *cq = lgp_poll_shim_cq(event_fid);
	int ret = 0;

	pthread_mutex_lock(&p->lock);
	if (!cq)
		ret = fi_poll_add(p->hpoll, lgp_fid_real(event_fid), flags);
	else if (p->ncqs == LGP_SET_MAX)
		ret = -FI_ENOSPC;
	else
		p->cqs[p->ncqs++] = cq;
	pthread_mutex_unlock(&p->lock);
	return ret;
}

static int lgp_poll_del(struct fid_poll *pollset, struct fid *event_fid,
			uint64_t flags)
{
	struct lgp_poll *p = lgp_poll_of(pollset);
	struct lgp_cq *cq = lgp_poll_shim_cq(event_fid);
	int ret = -FI_ENOENT;
	size_t k;

	pthread_mutex_lock(&p->lock);
	if (!cq)
		ret = fi_poll_del(p->hpoll, lgp_fid_real(event_fid), flags);
	for (k = 0; cq && k < p->ncqs; k++) {
		if (p->cqs[k] == cq) {
			p->cqs[k] = p->cqs[--p->ncqs];
			ret = 0;
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

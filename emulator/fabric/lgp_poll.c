/* SPDX-License-Identifier: MIT */
/*
 * Poll set wrapper: members are added as real objects; the contexts poll()
 * reports are the real objects', which were opened with the application's.
 */
#include <stdlib.h>

#include "lgp_fi.h"

static struct fid_poll *lgp_hpoll(struct fid_poll *p)
{
	return lgp_container_of(p, struct lgp_poll, poll)->hpoll;
}

static int lgp_poll_close(struct fid *fid)
{
	struct lgp_poll *p = lgp_container_of(fid, struct lgp_poll, poll.fid);
	int ret;

	ret = fi_close(&p->hpoll->fid);
	if (ret)
		return ret;
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
	return fi_poll(lgp_hpoll(pollset), context, count);
}

static int lgp_poll_add(struct fid_poll *pollset, struct fid *event_fid,
			uint64_t flags)
{
	return fi_poll_add(lgp_hpoll(pollset), lgp_fid_real(event_fid), flags);
}

static int lgp_poll_del(struct fid_poll *pollset, struct fid *event_fid,
			uint64_t flags)
{
	return fi_poll_del(lgp_hpoll(pollset), lgp_fid_real(event_fid), flags);
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
	p->poll.fid.fclass = FI_CLASS_POLL;
	p->poll.fid.ops = &lgp_poll_fi_ops;
	p->poll.ops = &lgp_poll_ops;
	*out = &p->poll;
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * Translation between wrappers and real objects, and the fi_ops entries
 * every wrapper shares.
 */
#include <stdlib.h>

#include "lgp_av.h"
#include "lgp_cntr.h"
#include "lgp_cq.h"
#include "lgp_domain.h"
#include "lgp_ep.h"
#include "lgp_eq.h"
#include "lgp_fabric.h"
#include "lgp_fid.h"
#include "lgp_mr.h"
#include "lgp_pep.h"
#include "lgp_poll.h"
#include "lgp_wait.h"

struct fid *lgp_fid_real(struct fid *fid)
{
	if (!fid)
		return NULL;
	if (fid->ops == &lgp_ep_fi_ops)
		return &lgp_container_of(fid, struct lgp_ep, ep.fid)->hep->fid;
	if (fid->ops == &lgp_cq_fi_ops)
		return &lgp_container_of(fid, struct lgp_cq, cq.fid)->hcq->fid;
	if (fid->ops == &lgp_cntr_fi_ops)
		return &lgp_container_of(fid, struct lgp_cntr, cntr.fid)->hcntr->fid;
	if (fid->ops == &lgp_av_fi_ops)
		return &lgp_container_of(fid, struct lgp_av, av.fid)->hav->fid;
	if (fid->ops == &lgp_eq_fi_ops)
		return &lgp_container_of(fid, struct lgp_eq, eq.fid)->heq->fid;
	if (fid->ops == &lgp_mr_fi_ops)
		return &lgp_container_of(fid, struct lgp_mr, mr.fid)->hmr->fid;
	if (fid->ops == &lgp_pep_fi_ops)
		return &lgp_container_of(fid, struct lgp_pep, pep.fid)->hpep->fid;
	if (fid->ops == &lgp_domain_fi_ops)
		return &lgp_container_of(fid, struct lgp_domain, domain.fid)->hdomain->fid;
	if (fid->ops == &lgp_poll_fi_ops)
		return &lgp_container_of(fid, struct lgp_poll, poll.fid)->hpoll->fid;
	if (fid->ops == &lgp_fabric_fi_ops)
		return &lgp_container_of(fid, struct lgp_fabric, fabric.fid)->hfabric->fid;
	if (fid->ops == &lgp_wait_fi_ops)
		return &lgp_container_of(fid, struct lgp_wait, wait.fid)->hwait->fid;
	return fid;
}

/*
 * Real objects keep the application's context (a core provider may report
 * it back to its user), so the way back from a real fid to our wrapper is
 * this table.  It is used off the data path: events, credit callbacks.
 */
#define LGP_FID_BUCKETS	256

struct lgp_fid_node {
	struct fid *real;
	struct fid *wrapper;
	struct lgp_fid_node *next;
};

static pthread_mutex_t lgp_fid_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lgp_fid_node *lgp_fid_table[LGP_FID_BUCKETS];

static size_t lgp_fid_hash(const struct fid *real)
{
	return ((uintptr_t) real >> 4) % LGP_FID_BUCKETS;
}

int lgp_fid_register(struct fid *wrapper, struct fid *real)
{
	struct lgp_fid_node *n = malloc(sizeof(*n));
	size_t h = lgp_fid_hash(real);

	if (!n)
		return -FI_ENOMEM;
	n->real = real;
	n->wrapper = wrapper;
	pthread_mutex_lock(&lgp_fid_lock);
	n->next = lgp_fid_table[h];
	lgp_fid_table[h] = n;
	pthread_mutex_unlock(&lgp_fid_lock);
	return 0;
}

void lgp_fid_unregister(struct fid *real)
{
	struct lgp_fid_node **p, *n;

	pthread_mutex_lock(&lgp_fid_lock);
	for (p = &lgp_fid_table[lgp_fid_hash(real)]; (n = *p); p = &n->next) {
		if (n->real == real) {
			*p = n->next;
			free(n);
			break;
		}
	}
	pthread_mutex_unlock(&lgp_fid_lock);
}

struct fid *lgp_fid_from_real(struct fid *hfid)
{
	struct lgp_fid_node *n;
	struct fid *w = hfid;

	pthread_mutex_lock(&lgp_fid_lock);
	for (n = lgp_fid_table[lgp_fid_hash(hfid)]; n; n = n->next) {
		if (n->real == hfid) {
			w = n->wrapper;
			break;
		}
	}
	pthread_mutex_unlock(&lgp_fid_lock);
	return w;
}

int lgp_fid_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct fid *hfid = lgp_fid_real(fid);

	return hfid->ops->bind(hfid, lgp_fid_real(bfid), flags);
}

int lgp_fid_control(struct fid *fid, int command, void *arg)
{
	return fi_control(lgp_fid_real(fid), command, arg);
}

int lgp_fid_tostr(const struct fid *fid, char *buf, size_t len)
{
	struct fid *hfid = lgp_fid_real((struct fid *) fid);

	if (!hfid->ops->tostr)
		return -FI_ENOSYS;
	return hfid->ops->tostr(hfid, buf, len);
}

int lgp_fid_ops_set(struct fid *fid, const char *name, uint64_t flags,
		    void *ops, void *context)
{
	struct fid *hfid = lgp_fid_real(fid);

	if (!hfid->ops->ops_set)
		return -FI_ENOSYS;
	return hfid->ops->ops_set(hfid, name, flags, ops, context);
}

/* The real object behind an optional fid inside a structure. */
static struct fid *lgp_fid_real_opt(struct fid *fid, bool *changed)
{
	struct fid *real = lgp_fid_real(fid);

	*changed |= real != fid;
	return real;
}

struct fi_info *lgp_info_real(struct fi_info *info, struct lgp_info_copy *copy)
{
	struct fid_domain *dom = info && info->domain_attr ?
				 info->domain_attr->domain : NULL;
	struct fid_fabric *fab = info && info->fabric_attr ?
				 info->fabric_attr->fabric : NULL;
	struct fid *handle, *hdom, *hfab;
	bool changed = false;

	if (!info)
		return NULL;
	handle = lgp_fid_real_opt(info->handle, &changed);
	hdom = lgp_fid_real_opt(dom ? &dom->fid : NULL, &changed);
	hfab = lgp_fid_real_opt(fab ? &fab->fid : NULL, &changed);
	if (!changed)
		return info;
	copy->info = *info;
	copy->info.handle = handle;
	if (dom) {
		copy->domain_attr = *info->domain_attr;
		copy->domain_attr.domain = lgp_container_of(hdom, struct fid_domain, fid);
		copy->info.domain_attr = &copy->domain_attr;
	}
	if (fab) {
		copy->fabric_attr = *info->fabric_attr;
		copy->fabric_attr.fabric = lgp_container_of(hfab, struct fid_fabric, fid);
		copy->info.fabric_attr = &copy->fabric_attr;
	}
	return &copy->info;
}

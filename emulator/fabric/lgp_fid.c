/* SPDX-License-Identifier: MIT */
/*
 * Translation between wrappers and real objects, and the fi_ops entries
 * every wrapper shares.
 */
#include "lgp_fi.h"

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
	return fid;
}

struct fid *lgp_fid_from_real(struct fid *hfid)
{
	struct fid *w;

	if (!hfid || !hfid->context)
		return hfid;
	w = hfid->context;
	return lgp_fid_real(w) == hfid && w != hfid ? w : hfid;
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

int lgp_fid_ops_open(struct fid *fid, const char *name, uint64_t flags,
		     void **ops, void *context)
{
	return fi_open_ops(lgp_fid_real(fid), name, flags, ops, context);
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

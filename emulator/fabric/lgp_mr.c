/* SPDX-License-Identifier: MIT */
/*
 * Memory region wrapper.  The descriptor and key are the real provider's
 * (copied into the wrapper), so data calls hand them through unchanged.
 */
#include <stdlib.h>

#include "lgp_fid.h"
#include "lgp_mr.h"

static int lgp_mr_close(struct fid *fid)
{
	struct lgp_mr *mr = lgp_container_of(fid, struct lgp_mr, mr.fid);
	int ret;

	ret = fi_close(&mr->hmr->fid);
	if (ret)
		return ret;
	lgp_fid_unregister(&mr->hmr->fid);
	free(mr);
	return 0;
}

/* Enabling or refreshing may assign the key: copy it again. */
static int lgp_mr_control(struct fid *fid, int command, void *arg)
{
	struct lgp_mr *mr = lgp_container_of(fid, struct lgp_mr, mr.fid);
	int ret;

	ret = fi_control(&mr->hmr->fid, command, arg);
	mr->mr.key = mr->hmr->key;
	mr->mr.mem_desc = mr->hmr->mem_desc;
	return ret;
}

struct fi_ops lgp_mr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lgp_mr_close,
	.bind = lgp_fid_bind,
	.control = lgp_mr_control,
	.ops_open = lgp_fid_ops_open,
	.tostr = lgp_fid_tostr,
	.ops_set = lgp_fid_ops_set,
};

static struct lgp_mr *lgp_mr_alloc(void *context)
{
	struct lgp_mr *mr = calloc(1, sizeof(*mr));

	if (!mr)
		return NULL;
	mr->mr.fid.fclass = FI_CLASS_MR;
	mr->mr.fid.context = context;
	mr->mr.fid.ops = &lgp_mr_fi_ops;
	return mr;
}

static int lgp_mr_done(struct lgp_mr *mr, int ret, struct fid_mr **out)
{
	if (ret) {
		free(mr);
		return ret;
	}
	mr->mr.key = mr->hmr->key;
	mr->mr.mem_desc = mr->hmr->mem_desc;
	lgp_fid_register(&mr->mr.fid, &mr->hmr->fid);
	*out = &mr->mr;
	return 0;
}

static int lgp_mr_reg(struct fid *fid, const void *buf, size_t len,
		      uint64_t access, uint64_t offset, uint64_t requested_key,
		      uint64_t flags, struct fid_mr **out, void *context)
{
	struct lgp_mr *mr = lgp_mr_alloc(context);

	if (!mr)
		return -FI_ENOMEM;
	return lgp_mr_done(mr, fi_mr_reg(
		(struct fid_domain *) lgp_fid_real(fid), buf, len, access, offset,
		requested_key, flags, &mr->hmr, context), out);
}

static int lgp_mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		       uint64_t access, uint64_t offset, uint64_t requested_key,
		       uint64_t flags, struct fid_mr **out, void *context)
{
	struct lgp_mr *mr = lgp_mr_alloc(context);

	if (!mr)
		return -FI_ENOMEM;
	return lgp_mr_done(mr, fi_mr_regv((struct fid_domain *) lgp_fid_real(fid),
					  iov, count, access, offset,
					  requested_key, flags, &mr->hmr, context),
			   out);
}

static int lgp_mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
			  uint64_t flags, struct fid_mr **out)
{
	struct lgp_mr *mr = lgp_mr_alloc(attr->context);

	if (!mr)
		return -FI_ENOMEM;
	return lgp_mr_done(mr, fi_mr_regattr((struct fid_domain *) lgp_fid_real(fid),
					     attr, flags, &mr->hmr), out);
}

struct fi_ops_mr lgp_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = lgp_mr_reg,
	.regv = lgp_mr_regv,
	.regattr = lgp_mr_regattr,
};

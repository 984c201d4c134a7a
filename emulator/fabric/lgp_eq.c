/* SPDX-License-Identifier: MIT */
/*
 * Event queue wrapper.  Events name real objects (the endpoint that got
 * connected, the passive endpoint a request came in on, the memory region
 * that finished registering); they are handed back naming our wrappers.
 * Contexts need no change: real objects carry the application's.
 */
#include <stdlib.h>

#include "lgp_eq.h"
#include "lgp_fabric.h"
#include "lgp_fid.h"

static int lgp_eq_close(struct fid *fid)
{
	struct lgp_eq *eq = lgp_container_of(fid, struct lgp_eq, eq.fid);
	int ret;

	ret = fi_close(&eq->heq->fid);
	if (ret)
		return ret;
	free(eq);
	return 0;
}

struct fi_ops lgp_eq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lgp_eq_close,
	.bind = lgp_fid_bind,
	.control = lgp_fid_control,
	.ops_open = lgp_fid_ops_open,
	.tostr = lgp_fid_tostr,
	.ops_set = lgp_fid_ops_set,
};

static struct lgp_eq *lgp_eq_of(struct fid_eq *eq)
{
	return lgp_container_of(eq, struct lgp_eq, eq);
}

/*
 * Every event starts with the fid it is about: name our wrapper instead.
 * A connection request's info may name a real object as its handle too.
 */
static void lgp_eq_fixup(uint32_t event, void *buf, size_t len)
{
	struct fi_eq_cm_entry *cm = buf;
	struct fi_eq_entry *e = buf;

	if (len >= sizeof(struct fid *) && e->fid)
		e->fid = lgp_fid_from_real(e->fid);
	if (event == FI_CONNREQ && len >= sizeof(*cm) && cm->info &&
	    cm->info->handle)
		cm->info->handle = lgp_fid_from_real(cm->info->handle);
}

static ssize_t lgp_eq_read(struct fid_eq *eq, uint32_t *event, void *buf,
			   size_t len, uint64_t flags)
{
	ssize_t ret = fi_eq_read(lgp_eq_of(eq)->heq, event, buf, len, flags);

	if (ret > 0)
		lgp_eq_fixup(*event, buf, (size_t) ret);
	return ret;
}

static ssize_t lgp_eq_sread(struct fid_eq *eq, uint32_t *event, void *buf,
			    size_t len, int timeout, uint64_t flags)
{
	ssize_t ret = fi_eq_sread(lgp_eq_of(eq)->heq, event, buf, len, timeout,
				  flags);

	if (ret > 0)
		lgp_eq_fixup(*event, buf, (size_t) ret);
	return ret;
}

static ssize_t lgp_eq_readerr(struct fid_eq *eq, struct fi_eq_err_entry *buf,
			      uint64_t flags)
{
	ssize_t ret = fi_eq_readerr(lgp_eq_of(eq)->heq, buf, flags);

	if (ret > 0 && buf->fid)
		buf->fid = lgp_fid_from_real(buf->fid);
	return ret;
}

static ssize_t lgp_eq_write(struct fid_eq *eq, uint32_t event, const void *buf,
			    size_t len, uint64_t flags)
{
	return fi_eq_write(lgp_eq_of(eq)->heq, event, buf, len, flags);
}

static const char *lgp_eq_strerror(struct fid_eq *eq, int prov_errno,
				   const void *err_data, char *buf, size_t len)
{
	return fi_eq_strerror(lgp_eq_of(eq)->heq, prov_errno, err_data, buf, len);
}

static struct fi_ops_eq lgp_eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = lgp_eq_read,
	.readerr = lgp_eq_readerr,
	.write = lgp_eq_write,
	.sread = lgp_eq_sread,
	.strerror = lgp_eq_strerror,
};

int lgp_eq_open(struct lgp_fabric *fab, struct fi_eq_attr *attr,
		struct fid_eq **out, void *context)
{
	struct fi_eq_attr hattr = *attr;
	struct lgp_eq *eq;
	int ret;

	eq = calloc(1, sizeof(*eq));
	if (!eq)
		return -FI_ENOMEM;
	if (attr->wait_set)
		hattr.wait_set = (struct fid_wait *) lgp_fid_real(&attr->wait_set->fid);
	ret = fi_eq_open(fab->hfabric, &hattr, &eq->heq, context);
	if (ret) {
		free(eq);
		return ret;
	}
	eq->eq.fid.fclass = FI_CLASS_EQ;
	eq->eq.fid.context = context;
	eq->eq.fid.ops = &lgp_eq_fi_ops;
	eq->eq.ops = &lgp_eq_ops;
	*out = &eq->eq;
	return 0;
}

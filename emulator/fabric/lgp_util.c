/* SPDX-License-Identifier: MIT */
/*
 * o_r above a utility provider, and its endpoints' o_s (lgp_util_ep.c;
 * lgp_util.h says why).
 *
 * The utility's objects stay the provider's own: only their ops pointers
 * are pointed at copies of the provider's tables with a few entries
 * replaced, each copy allocated beside the original pointers so a call
 * finds its state from the ops pointer alone (no lookup, no lock).  The
 * copies are freed when the object closes.
 */
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>

#include "lgp_config.h"
#include "lgp_cq.h"
#include "lgp_domain.h"
#include "lgp_engine.h"
#include "lgp_fabric.h"
#include "lgp_fid.h"
#include "lgp_util.h"

/* Completions read per call into the widened buffer. */
#define LGP_UTIL_BATCH	64

struct lgp_util_fabric {
	struct fi_ops_fabric ops;
	struct fi_ops fid_ops;
	const struct fi_ops_fabric *orig;
	const struct fi_ops *orig_fid;
};

struct lgp_util_domain {
	struct fi_ops_domain ops;
	struct fi_ops fid_ops;
	const struct fi_ops_domain *orig;
	const struct fi_ops *orig_fid;
	struct lgp_domain *core;	/* the core domain opened beneath */
};

struct lgp_util_cq {
	struct fi_ops_cq ops;
	struct fi_ops fid_ops;
	const struct fi_ops_cq *orig;
	const struct fi_ops *orig_fid;
	struct lgp_domain *core;
	size_t app_size;		/* the application's entry size */
	size_t real_size;		/* the utility CQ's, with flags */
};

/* The utility domain opening on this thread, to be told its core domain. */
static __thread struct lgp_util_domain *lgp_util_opening;
/*
 * Set while this thread is inside a utility CQ read: libfabric's util CQ
 * implements one read variant by calling another through the ops table,
 * which is ours, and only the outermost call hands entries over.
 */
static __thread bool lgp_util_reading;

void lgp_util_copy(void *dst, const void *src, size_t ours)
{
	size_t theirs = *(const size_t *) src;

	memset(dst, 0, ours);
	memcpy(dst, src, theirs < ours ? theirs : ours);
	*(size_t *) dst = ours;
}

bool lgp_util_claim(struct lgp_domain *core)
{
	if (!lgp_util_opening || lgp_util_opening->core)
		return false;
	lgp_util_opening->core = core;
	return true;
}

/* ---- completion queues ---- */

static struct lgp_util_cq *lgp_util_cq_of(struct fid_cq *cq)
{
	return lgp_container_of(cq->ops, struct lgp_util_cq, ops);
}

/*
 * Moves n entries read in the utility's format into the application's
 * (every format is a prefix of the next) and spins o_r for the receives.
 */
static ssize_t lgp_util_cq_hand(struct lgp_util_cq *u, void *buf,
				const void *raw, ssize_t n)
{
	size_t nrecv = 0;
	ssize_t i;

	for (i = 0; i < n; i++) {
		const struct fi_cq_msg_entry *e = (const void *)
			((const char *) raw + (size_t) i * u->real_size);

		if (e->flags & FI_RECV)
			nrecv++;
		if (raw != buf)
			memcpy((char *) buf + (size_t) i * u->app_size, e,
			       u->app_size);
	}
	if (nrecv) {
		lgp_stats_add(&u->core->fab->stats, LGP_STAT_RECV_MSGS, nrecv);
		lgp_eng_recv_overhead(&u->core->eng, nrecv);
	}
	return n;
}

/*
 * Every read variant: the outermost reads into the widened buffer and hands
 * over; nested ones (libfabric's own dispatch) read straight through.
 */
static ssize_t lgp_util_cq_get(struct fid_cq *cq, void *buf, size_t count,
			       fi_addr_t *src_addr, bool wait, const void *cond,
			       int timeout)
{
	struct lgp_util_cq *u = lgp_util_cq_of(cq);
	struct fi_cq_tagged_entry raw[LGP_UTIL_BATCH];
	bool outer = !lgp_util_reading;
	void *into = outer && u->app_size != u->real_size ? raw : buf;
	ssize_t n;

	if (into == raw && count > LGP_UTIL_BATCH)
		count = LGP_UTIL_BATCH;
	lgp_util_reading = true;
	n = wait ? u->orig->sreadfrom(cq, into, count, src_addr, cond, timeout) :
		   u->orig->readfrom(cq, into, count, src_addr);
	if (!outer)
		return n;
	lgp_util_reading = false;
	return n > 0 ? lgp_util_cq_hand(u, buf, into, n) : n;
}

static ssize_t lgp_util_cq_readfrom(struct fid_cq *cq, void *buf, size_t count,
				    fi_addr_t *src_addr)
{
	return lgp_util_cq_get(cq, buf, count, src_addr, false, NULL, 0);
}

static ssize_t lgp_util_cq_read(struct fid_cq *cq, void *buf, size_t count)
{
	return lgp_util_cq_get(cq, buf, count, NULL, false, NULL, 0);
}

static ssize_t lgp_util_cq_sreadfrom(struct fid_cq *cq, void *buf, size_t count,
				     fi_addr_t *src_addr, const void *cond,
				     int timeout)
{
	return lgp_util_cq_get(cq, buf, count, src_addr, true, cond, timeout);
}

static ssize_t lgp_util_cq_sread(struct fid_cq *cq, void *buf, size_t count,
				 const void *cond, int timeout)
{
	return lgp_util_cq_get(cq, buf, count, NULL, true, cond, timeout);
}

static int lgp_util_cq_close(struct fid *fid)
{
	struct lgp_util_cq *u = lgp_container_of(fid->ops, struct lgp_util_cq,
						 fid_ops);
	int ret = u->orig_fid->close(fid);

	if (!ret)
		free(u);
	return ret;
}

static int lgp_util_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
			    struct fid_cq **cq, void *context)
{
	struct lgp_util_domain *ud = lgp_container_of(domain->ops,
						      struct lgp_util_domain, ops);
	enum fi_cq_format app = attr->format == FI_CQ_FORMAT_UNSPEC ?
				FI_CQ_FORMAT_CONTEXT : attr->format;
	struct fi_cq_attr wide = *attr;
	struct lgp_util_cq *u;
	int ret;

	if (!ud->core || app > FI_CQ_FORMAT_TAGGED)
		return ud->orig->cq_open(domain, attr, cq, context);
	u = calloc(1, sizeof(*u));
	if (!u)
		return -FI_ENOMEM;
	/* The context format has no flags to tell receives by. */
	if (app == FI_CQ_FORMAT_CONTEXT)
		wide.format = FI_CQ_FORMAT_MSG;
	ret = ud->orig->cq_open(domain, &wide, cq, context);
	if (ret) {
		free(u);
		return ret;
	}
	u->core = ud->core;
	u->app_size = lgp_cq_entry_size(app);
	u->real_size = lgp_cq_entry_size(wide.format);
	u->orig = (*cq)->ops;
	u->orig_fid = (*cq)->fid.ops;
	lgp_util_copy(&u->ops, u->orig, sizeof(u->ops));
	lgp_util_copy(&u->fid_ops, u->orig_fid, sizeof(u->fid_ops));
	u->ops.read = lgp_util_cq_read;
	u->ops.readfrom = lgp_util_cq_readfrom;
	u->ops.sread = lgp_util_cq_sread;
	u->ops.sreadfrom = lgp_util_cq_sreadfrom;
	u->fid_ops.close = lgp_util_cq_close;
	(*cq)->ops = &u->ops;
	(*cq)->fid.ops = &u->fid_ops;
	return 0;
}

/* ---- domains ---- */

static int lgp_util_ep_done(struct lgp_util_domain *ud, int ret,
			    struct fid_ep **ep)
{
	if (ret || !ud->core)
		return ret;
	ret = lgp_util_ep_wrap(ud->core, *ep);
	if (ret)
		fi_close(&(*ep)->fid);
	return ret;
}

static int lgp_util_endpoint(struct fid_domain *domain, struct fi_info *info,
			     struct fid_ep **ep, void *context)
{
	struct lgp_util_domain *ud = lgp_container_of(domain->ops,
						      struct lgp_util_domain, ops);

	return lgp_util_ep_done(ud, ud->orig->endpoint(domain, info, ep,
						       context), ep);
}

static int lgp_util_endpoint2(struct fid_domain *domain, struct fi_info *info,
			      struct fid_ep **ep, uint64_t flags, void *context)
{
	struct lgp_util_domain *ud = lgp_container_of(domain->ops,
						      struct lgp_util_domain, ops);

	return lgp_util_ep_done(ud, ud->orig->endpoint2(domain, info, ep, flags,
							context), ep);
}

static int lgp_util_domain_close(struct fid *fid)
{
	struct lgp_util_domain *u = lgp_container_of(fid->ops,
						     struct lgp_util_domain,
						     fid_ops);
	int ret = u->orig_fid->close(fid);

	if (!ret)
		free(u);
	return ret;
}

/*
 * A utility domain opens its core domain inside its own open: the core
 * domain claims the state begun here (lgp_util_claim()), and the domain
 * that comes back gets the overrides.
 */
static struct lgp_util_domain *lgp_util_domain_begin(void)
{
	lgp_util_opening = calloc(1, sizeof(*lgp_util_opening));
	return lgp_util_opening;
}

static int lgp_util_domain_end(struct lgp_util_domain *u, int ret,
			       struct fid_domain **domain)
{
	lgp_util_opening = NULL;
	if (ret) {
		free(u);
		return ret;
	}
	u->orig = (*domain)->ops;
	u->orig_fid = (*domain)->fid.ops;
	lgp_util_copy(&u->ops, u->orig, sizeof(u->ops));
	lgp_util_copy(&u->fid_ops, u->orig_fid, sizeof(u->fid_ops));
	u->ops.cq_open = lgp_util_cq_open;
	u->ops.endpoint = lgp_util_endpoint;
	if (u->ops.endpoint2)
		u->ops.endpoint2 = lgp_util_endpoint2;
	u->fid_ops.close = lgp_util_domain_close;
	(*domain)->ops = &u->ops;
	(*domain)->fid.ops = &u->fid_ops;
	return 0;
}

static const struct fi_ops_fabric *lgp_util_fabric_orig(struct fid_fabric *fabric)
{
	return lgp_container_of(fabric->ops, struct lgp_util_fabric, ops)->orig;
}

static int lgp_util_domain(struct fid_fabric *fabric, struct fi_info *info,
			   struct fid_domain **domain, void *context)
{
	struct lgp_util_domain *u = lgp_util_domain_begin();

	if (!u)
		return -FI_ENOMEM;
	return lgp_util_domain_end(u, lgp_util_fabric_orig(fabric)->domain(
					   fabric, info, domain, context), domain);
}

static int lgp_util_domain2(struct fid_fabric *fabric, struct fi_info *info,
			    struct fid_domain **domain, uint64_t flags,
			    void *context)
{
	struct lgp_util_domain *u = lgp_util_domain_begin();

	if (!u)
		return -FI_ENOMEM;
	return lgp_util_domain_end(u, lgp_util_fabric_orig(fabric)->domain2(
					   fabric, info, domain, flags, context),
				   domain);
}

/* ---- fabrics ---- */

static int lgp_util_fabric_close(struct fid *fid)
{
	struct lgp_util_fabric *u = lgp_container_of(fid->ops,
						     struct lgp_util_fabric,
						     fid_ops);
	int ret = u->orig_fid->close(fid);

	if (!ret)
		free(u);
	return ret;
}

int lgp_util_hook(struct fid_fabric *fabric)
{
	const struct lgp_config *cfg = lgp_config_get();
	struct lgp_util_fabric *u;

	if (cfg->error || (!cfg->peak.recv_overhead_ns &&
			   !cfg->peak.send_overhead_ns))
		return 0;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -FI_ENOMEM;
	u->orig = fabric->ops;
	u->orig_fid = fabric->fid.ops;
	lgp_util_copy(&u->ops, u->orig, sizeof(u->ops));
	lgp_util_copy(&u->fid_ops, u->orig_fid, sizeof(u->fid_ops));
	u->ops.domain = lgp_util_domain;
	if (u->ops.domain2)
		u->ops.domain2 = lgp_util_domain2;
	u->fid_ops.close = lgp_util_fabric_close;
	fabric->ops = &u->ops;
	fabric->fid.ops = &u->fid_ops;
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * Domain wrapper: owns the delay engine of deferred operations and the
 * lock that serialises them with the application's calls.
 */
#include <stdlib.h>

#include "lgp_av.h"
#include "lgp_cntr.h"
#include "lgp_config.h"
#include "lgp_cq.h"
#include "lgp_domain.h"
#include "lgp_engine.h"
#include "lgp_ep.h"
#include "lgp_fabric.h"
#include "lgp_fid.h"
#include "lgp_mr.h"
#include "lgp_poll.h"
#include "lgp_progress.h"
#include "lgp_send.h"
#include "lgp_util.h"

/* Deferred operations one domain can hold across all its endpoints. */
#define LGP_DOMAIN_QUEUE_DEPTH	(1u << 16)
/* Domains opened so far: each draws its own stream of delays. */
static uint64_t lgp_domain_streams;

void lgp_domain_drive(struct lgp_domain *dom)
{
	struct lgp_cq *cq;

	for (cq = dom->cqs; cq; cq = cq->next_in_dom)
		if (cq->drivable)
			lgp_cq_drain(cq);
}

static int lgp_domain_close(struct fid *fid)
{
	struct lgp_domain *dom = lgp_container_of(fid, struct lgp_domain, domain.fid);
	int ret;

	if (dom->active)
		lgp_progress_del(dom);
	ret = fi_close(&dom->hdomain->fid);
	if (ret) {
		if (dom->active)
			lgp_progress_add(dom);
		return ret;
	}
	lgp_eng_fini(&dom->eng);
	pthread_mutex_destroy(&dom->lock);
	free(dom->paths);
	free(dom);
	return 0;
}

struct fi_ops lgp_domain_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lgp_domain_close,
	.bind = lgp_fid_bind,
	.control = lgp_fid_control,
	.ops_open = lgp_domain_ops_open,
	.tostr = lgp_fid_tostr,
	.ops_set = lgp_fid_ops_set,
};

static struct lgp_domain *lgp_dom(struct fid_domain *domain)
{
	return lgp_container_of(domain, struct lgp_domain, domain);
}

static int lgp_domain_ep_open(struct fid_domain *domain, struct fi_info *info,
			      struct fid_ep **ep, uint64_t flags, void *context,
			      size_t fclass)
{
	struct lgp_domain *dom = lgp_dom(domain);
	struct lgp_info_copy copy;
	struct fi_info *hinfo = lgp_info_real(info, &copy);
	struct fid_ep *hep;
	int ret;

	if (fclass == FI_CLASS_SEP)
		ret = fi_scalable_ep(dom->hdomain, hinfo, &hep, context);
	else if (flags)
		ret = fi_endpoint2(dom->hdomain, hinfo, &hep, flags, context);
	else
		ret = fi_endpoint(dom->hdomain, hinfo, &hep, context);
	if (ret)
		return ret;
	ret = lgp_ep_wrap(dom, hep, context, fclass, info, ep);
	if (ret)
		fi_close(&hep->fid);
	return ret;
}

static int lgp_domain_endpoint(struct fid_domain *domain, struct fi_info *info,
			       struct fid_ep **ep, void *context)
{
	return lgp_domain_ep_open(domain, info, ep, 0, context, FI_CLASS_EP);
}

static int lgp_domain_endpoint2(struct fid_domain *domain, struct fi_info *info,
				struct fid_ep **ep, uint64_t flags, void *context)
{
	return lgp_domain_ep_open(domain, info, ep, flags, context, FI_CLASS_EP);
}

static int lgp_domain_scalable_ep(struct fid_domain *domain, struct fi_info *info,
				  struct fid_ep **sep, void *context)
{
	return lgp_domain_ep_open(domain, info, sep, 0, context, FI_CLASS_SEP);
}

static int lgp_domain_srx_ctx(struct fid_domain *domain, struct fi_rx_attr *attr,
			      struct fid_ep **rx_ep, void *context)
{
	struct lgp_domain *dom = lgp_dom(domain);
	struct fid_ep *hrx;
	int ret;

	ret = fi_srx_context(dom->hdomain, attr, &hrx, context);
	if (ret)
		return ret;
	ret = lgp_ep_wrap(dom, hrx, context, FI_CLASS_SRX_CTX, NULL, rx_ep);
	if (ret)
		fi_close(&hrx->fid);
	return ret;
}

/* Shared transmit contexts pass through: endpoints bind the real one. */
static int lgp_domain_stx_ctx(struct fid_domain *domain, struct fi_tx_attr *attr,
			      struct fid_stx **stx, void *context)
{
	return fi_stx_context(lgp_dom(domain)->hdomain, attr, stx, context);
}

static int lgp_domain_query_atomic(struct fid_domain *domain,
				   enum fi_datatype datatype, enum fi_op op,
				   struct fi_atomic_attr *attr, uint64_t flags)
{
	return fi_query_atomic(lgp_dom(domain)->hdomain, datatype, op, attr, flags);
}

/*
 * Endpoints are never given collective ops (lgp_ep_wrap), so no
 * collective is offered either: a program asks here before it joins.
 */
static int lgp_domain_query_collective(struct fid_domain *domain,
				       enum fi_collective_op coll,
				       struct fi_collective_attr *attr,
				       uint64_t flags)
{
	return -FI_ENOSYS;
}

static struct fi_ops_domain lgp_domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = lgp_av_open,
	.cq_open = lgp_cq_open,
	.endpoint = lgp_domain_endpoint,
	.scalable_ep = lgp_domain_scalable_ep,
	.cntr_open = lgp_cntr_open,
	.poll_open = lgp_poll_open,
	.stx_ctx = lgp_domain_stx_ctx,
	.srx_ctx = lgp_domain_srx_ctx,
	.query_atomic = lgp_domain_query_atomic,
	.query_collective = lgp_domain_query_collective,
	.endpoint2 = lgp_domain_endpoint2,
};

/* One pacer per destination rank of the topology's gap and bulk gap. */
static int lgp_domain_paths(struct lgp_domain *dom, const struct lgp_topo *t)
{
	uint32_t d;

	dom->paths = calloc(t->ranks, sizeof(*dom->paths));
	if (!dom->paths)
		return -FI_ENOMEM;
	for (d = 0; d < t->ranks; d++)
		lgp_pacer_init(&dom->paths[d], t->gap_ns[d], t->bulk_gap_fs[d]);
	return 0;
}

int lgp_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain, void *context)
{
	struct lgp_fabric *fab = lgp_container_of(fabric, struct lgp_fabric, fabric);
	const struct lgp_config *cfg = lgp_config_get();
	struct lgp_info_copy copy;
	struct lgp_domain *dom;
	pthread_mutexattr_t ma;
	int ret;

	/* The message was printed when the fabric was hooked. */
	if (cfg->error)
		return -FI_EINVAL;

	dom = calloc(1, sizeof(*dom));
	if (!dom)
		return -FI_ENOMEM;
	dom->fab = fab;
	dom->active = cfg->active;
	dom->topo = cfg->topo.adds ? &cfg->topo : NULL;
	if (cfg->topo.paces) {
		ret = lgp_domain_paths(dom, &cfg->topo);
		if (ret) {
			free(dom);
			return ret;
		}
	}
	dom->next_signal = UINT64_MAX;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&dom->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	ret = lgp_eng_init(&dom->eng, &cfg->params, &lgp_send_eng_ops, &fab->stats,
			   dom->active ? LGP_DOMAIN_QUEUE_DEPTH : 0);
	if (ret) {
		ret = -FI_ENOMEM;
		goto err_queue;
	}
	/* Each domain its own stream of the seed's delays. */
	lgp_eng_set_dist(&dom->eng, &cfg->dist, cfg->dist_stream +
			 __atomic_fetch_add(&lgp_domain_streams, 1, __ATOMIC_RELAXED));
	if (cfg->sched.steps)
		lgp_eng_set_sched(&dom->eng, &cfg->sched, cfg->sched_origin, fab->steps);

	ret = fi_domain(fab->hfabric, lgp_info_real(info, &copy), &dom->hdomain,
			context);
	if (ret)
		goto err_queue;

	dom->domain.fid.fclass = FI_CLASS_DOMAIN;
	dom->domain.fid.context = context;
	dom->domain.fid.ops = &lgp_domain_fi_ops;
	dom->domain.ops = &lgp_domain_ops;
	dom->domain.mr = &lgp_mr_ops;

	if (dom->active) {
		ret = lgp_progress_add(dom);
		if (ret)
			goto err_domain;
	}
	dom->util_above = lgp_util_claim(dom);
	*domain = &dom->domain;
	return 0;

err_domain:
	fi_close(&dom->hdomain->fid);
err_queue:
	lgp_eng_fini(&dom->eng);
	pthread_mutex_destroy(&dom->lock);
	free(dom->paths);
	free(dom);
	return ret;
}

/* SPDX-License-Identifier: MIT */
/*
 * Endpoint wrapper: life cycle, bindings, control and connection
 * management.  Data transfers are in lgp_ep_data.c.
 */
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include <rdma/fi_cm.h>

#include <lgp/clock.h>

#include "lgp_av.h"
#include "lgp_cntr.h"
#include "lgp_config.h"
#include "lgp_cq.h"
#include "lgp_domain.h"
#include "lgp_engine.h"
#include "lgp_ep.h"
#include "lgp_fid.h"
#include "lgp_log.h"
#include "lgp_pep.h"
#include "lgp_req.h"

/*
 * How long a flush waits, once every deferred send is due, without one
 * being posted or completed: a peer that is gone leaves some providers
 * (tcp) failing the sends with no completion at all.
 */
#define LGP_EP_FLUSH_IDLE_NS	(2ULL * 1000000000ULL)

/*
 * A provider drops what is still queued when its endpoint closes, so the
 * flush waits for the shim's posts to complete, not only to be posted,
 * driving the domain's CQs meanwhile (lgp_domain_drive).
 */
void lgp_ep_flush(struct lgp_ep *ep)
{
	struct lgp_domain *dom = ep->dom;
	uint64_t now = lgp_now_ns(), deadline, last_due;
	size_t left, was;

	pthread_mutex_lock(&dom->lock);
	ep->flushing = true;
	/* The endpoint's last deferred send is due when its port is free + L. */
	last_due = lgp_eng_port_last_due(&dom->eng, &ep->port);
	deadline = (last_due > now ? last_due : now) + LGP_EP_FLUSH_IDLE_NS;
	was = ep->port.queued_msgs + ep->inflight;
	while ((left = ep->port.queued_msgs + ep->inflight)) {
		now = lgp_now_ns();
		if (left < was && now + LGP_EP_FLUSH_IDLE_NS > deadline)
			deadline = now + LGP_EP_FLUSH_IDLE_NS;
		was = left;
		if (now > deadline)
			break;
		lgp_eng_release(&dom->eng, now);
		lgp_domain_drive(dom);
		if (!ep->port.queued_msgs && !ep->inflight)
			break;
		pthread_mutex_unlock(&dom->lock);
		sched_yield();
		pthread_mutex_lock(&dom->lock);
	}
	if (ep->port.queued_msgs || ep->inflight)
		LGP_WARN(FI_LOG_EP_DATA, "flushing endpoint: %zu deferred sends "
			 "not posted, %zu not completed by the provider\n",
			 ep->port.queued_msgs, ep->inflight);
	ep->flushing = false;
	pthread_mutex_unlock(&dom->lock);
}

static void lgp_ep_unlink(struct lgp_ep *ep)
{
	struct lgp_ep **p;

	pthread_mutex_lock(&ep->dom->lock);
	for (p = &ep->dom->eps; *p; p = &(*p)->next_in_dom) {
		if (*p == ep) {
			*p = ep->next_in_dom;
			break;
		}
	}
	pthread_mutex_unlock(&ep->dom->lock);
}

/*
 * Before an endpoint closes, every endpoint of its domain sends what it
 * holds: some may be held for the closing one, which the program sent
 * before closing it (shm crashes posting to an endpoint of its own
 * process that is gone).  The domain stays locked throughout, so no
 * endpoint leaves the list meanwhile.
 */
static void lgp_ep_flush_domain(struct lgp_domain *dom)
{
	struct lgp_ep *ep;

	pthread_mutex_lock(&dom->lock);
	for (ep = dom->eps; ep; ep = ep->next_in_dom)
		if (ep->port.queued_msgs || ep->inflight)
			lgp_ep_flush(ep);
	pthread_mutex_unlock(&dom->lock);
}

static int lgp_ep_close(struct fid *fid)
{
	struct lgp_ep *ep = lgp_container_of(fid, struct lgp_ep, ep.fid);
	int ret;

	if (ep->dom->active)
		lgp_ep_flush_domain(ep->dom);
	ret = fi_close(&ep->hep->fid);
	if (ret)
		return ret;
	if (ep->dom->active)
		lgp_req_forget_ep(ep);
	lgp_ep_unlink(ep);
	lgp_fid_unregister(&ep->hep->fid);
	free(ep);
	return 0;
}

static int lgp_ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct lgp_ep *ep = lgp_container_of(fid, struct lgp_ep, ep.fid);
	int ret;

	ret = fi_ep_bind(ep->hep, lgp_fid_real(bfid), flags);
	if (ret)
		return ret;
	pthread_mutex_lock(&ep->dom->lock);
	if (bfid->ops == &lgp_cq_fi_ops) {
		struct lgp_cq *cq = lgp_container_of(bfid, struct lgp_cq, cq.fid);

		if (flags & FI_TRANSMIT) {
			ep->tx_cq = cq;
			ep->tx_selective = !!(flags & FI_SELECTIVE_COMPLETION);
		}
		if (flags & FI_RECV)
			ep->rx_cq = cq;
	} else if (bfid->ops == &lgp_cntr_fi_ops) {
		if (flags & FI_RECV)
			lgp_container_of(bfid, struct lgp_cntr,
					 cntr.fid)->counts_recv = true;
		/* Some providers' inject calls count nothing (tcp MSG). */
		if (flags & (FI_SEND | FI_WRITE | FI_READ))
			ep->tx_counted = true;
	} else if (bfid->ops == &lgp_av_fi_ops) {
		ep->av = lgp_container_of(bfid, struct lgp_av, av.fid);
	}
	pthread_mutex_unlock(&ep->dom->lock);
	return 0;
}

void lgp_ep_enabled(struct lgp_ep *ep)
{
	__atomic_store_n(&ep->enabled, true, __ATOMIC_RELEASE);
	if (ep->tx_cq)
		ep->tx_cq->drivable = true;
	if (ep->rx_cq)
		ep->rx_cq->drivable = true;
}

/*
 * Commands whose argument carries fids or makes new objects are checked
 * here: an alias or a duplicate would be a real endpoint the shim never
 * sees, so it is refused rather than let through undelayed.
 */
static int lgp_ep_control(struct fid *fid, int command, void *arg)
{
	struct lgp_ep *ep = lgp_container_of(fid, struct lgp_ep, ep.fid);
	int ret;

	if (command == FI_ALIAS || command == FI_DUP)
		return -FI_ENOSYS;
	ret = fi_control(&ep->hep->fid, command, arg);
	if (ret)
		return ret;
	if (command == FI_ENABLE) {
		pthread_mutex_lock(&ep->dom->lock);
		lgp_ep_enabled(ep);
		pthread_mutex_unlock(&ep->dom->lock);
		lgp_topo_publish(&lgp_config_get()->topo, &ep->hep->fid);
	} else if (command == FI_SETOPSFLAG && arg &&
		   (*(uint64_t *) arg & FI_TRANSMIT)) {
		ep->tx_op_flags = *(uint64_t *) arg & ~FI_TRANSMIT;
	}
	return 0;
}

struct fi_ops lgp_ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lgp_ep_close,
	.bind = lgp_ep_bind,
	.control = lgp_ep_control,
	.ops_open = lgp_fid_ops_open,
	.tostr = lgp_fid_tostr,
	.ops_set = lgp_fid_ops_set,
};

static struct lgp_ep *lgp_ep_of(struct fid_ep *ep)
{
	return lgp_container_of(ep, struct lgp_ep, ep);
}

static ssize_t lgp_ep_cancel(fid_t fid, void *context)
{
	return fi_cancel(lgp_fid_real(fid), context);
}

static int lgp_ep_getopt(fid_t fid, int level, int optname, void *optval,
			 size_t *optlen)
{
	return fi_getopt(lgp_fid_real(fid), level, optname, optval, optlen);
}

static int lgp_ep_setopt(fid_t fid, int level, int optname, const void *optval,
			 size_t optlen)
{
	return fi_setopt(lgp_fid_real(fid), level, optname, optval, optlen);
}

static int lgp_ep_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
			 struct fid_ep **tx_ep, void *context)
{
	struct lgp_ep *ep = lgp_ep_of(sep);
	struct fi_info info = { .tx_attr = attr };
	struct fid_ep *htx;
	int ret;

	ret = fi_tx_context(ep->hep, index, attr, &htx, context);
	if (ret)
		return ret;
	ret = lgp_ep_wrap(ep->dom, htx, context, FI_CLASS_TX_CTX,
			  attr ? &info : NULL, tx_ep);
	if (ret)
		fi_close(&htx->fid);
	return ret;
}

static int lgp_ep_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
			 struct fid_ep **rx_ep, void *context)
{
	struct lgp_ep *ep = lgp_ep_of(sep);
	struct fid_ep *hrx;
	int ret;

	ret = fi_rx_context(ep->hep, index, attr, &hrx, context);
	if (ret)
		return ret;
	ret = lgp_ep_wrap(ep->dom, hrx, context, FI_CLASS_RX_CTX, NULL, rx_ep);
	if (ret)
		fi_close(&hrx->fid);
	return ret;
}

static ssize_t lgp_ep_rx_size_left(struct fid_ep *ep)
{
	struct fid_ep *hep = lgp_ep_of(ep)->hep;

	return hep->ops->rx_size_left(hep);
}

static ssize_t lgp_ep_tx_size_left(struct fid_ep *ep)
{
	struct fid_ep *hep = lgp_ep_of(ep)->hep;

	return hep->ops->tx_size_left(hep);
}

static struct fi_ops_ep lgp_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = lgp_ep_cancel,
	.getopt = lgp_ep_getopt,
	.setopt = lgp_ep_setopt,
	.tx_ctx = lgp_ep_tx_ctx,
	.rx_ctx = lgp_ep_rx_ctx,
	.rx_size_left = lgp_ep_rx_size_left,
	.tx_size_left = lgp_ep_tx_size_left,
};

/* Connection management passes straight through to the real endpoint. */
static int lgp_cm_setname(fid_t fid, void *addr, size_t addrlen)
{
	return fi_setname(lgp_fid_real(fid), addr, addrlen);
}

static int lgp_cm_getname(fid_t fid, void *addr, size_t *addrlen)
{
	return fi_getname(lgp_fid_real(fid), addr, addrlen);
}

static int lgp_cm_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	return fi_getpeer(lgp_ep_of(ep)->hep, addr, addrlen);
}

/*
 * A connecting endpoint's own address is what its peer's fi_getpeer
 * finds, a listening one's what a connecting peer's finds: both are
 * published for a topology (lgp_topo.h).
 */
static int lgp_cm_connect(struct fid_ep *ep, const void *addr,
			  const void *param, size_t paramlen)
{
	struct fid_ep *hep = lgp_ep_of(ep)->hep;
	int ret = fi_connect(hep, addr, param, paramlen);

	if (!ret)
		lgp_topo_publish(&lgp_config_get()->topo, &hep->fid);
	return ret;
}

static int lgp_cm_listen(struct fid_pep *pep)
{
	struct fid_pep *hpep = lgp_container_of(pep, struct lgp_pep, pep)->hpep;
	int ret = fi_listen(hpep);

	if (!ret)
		lgp_topo_publish(&lgp_config_get()->topo, &hpep->fid);
	return ret;
}

static int lgp_cm_accept(struct fid_ep *ep, const void *param, size_t paramlen)
{
	return fi_accept(lgp_ep_of(ep)->hep, param, paramlen);
}

static int lgp_cm_reject(struct fid_pep *pep, fid_t handle, const void *param,
			 size_t paramlen)
{
	return fi_reject(lgp_container_of(pep, struct lgp_pep, pep)->hpep,
			 handle, param, paramlen);
}

/* What the application already saw sent must reach the wire first. */
static int lgp_cm_shutdown(struct fid_ep *fep, uint64_t flags)
{
	struct lgp_ep *ep = lgp_ep_of(fep);

	if (ep->dom->active)
		lgp_ep_flush(ep);
	return fi_shutdown(ep->hep, flags);
}

static int lgp_cm_join(struct fid_ep *ep, const void *addr, uint64_t flags,
		       struct fid_mc **mc, void *context)
{
	return fi_join(lgp_ep_of(ep)->hep, addr, flags, mc, context);
}

struct fi_ops_cm lgp_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = lgp_cm_setname,
	.getname = lgp_cm_getname,
	.getpeer = lgp_cm_getpeer,
	.connect = lgp_cm_connect,
	.listen = lgp_cm_listen,
	.accept = lgp_cm_accept,
	.reject = lgp_cm_reject,
	.shutdown = lgp_cm_shutdown,
	.join = lgp_cm_join,
};

int lgp_ep_wrap(struct lgp_domain *dom, struct fid_ep *hep, void *context,
		size_t fclass, const struct fi_info *info, struct fid_ep **out)
{
	struct lgp_ep *ep;

	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	ep->hep = hep;
	ep->dom = dom;
	if (info && info->tx_attr) {
		ep->tx_op_flags = info->tx_attr->op_flags;
		ep->inject_size = info->tx_attr->inject_size;
	}
	lgp_eng_port_init(&dom->eng, &ep->port);
	ep->peer.rank = LGP_TOPO_UNKNOWN;

	ep->ep.fid.fclass = fclass;
	ep->ep.fid.context = context;
	ep->ep.fid.ops = &lgp_ep_fi_ops;
	ep->ep.ops = &lgp_ep_ops;
	/* Mirror the real endpoint: an interface it lacks stays absent. */
	ep->ep.cm = hep->cm ? &lgp_cm_ops : NULL;
	ep->ep.msg = hep->msg ? &lgp_ep_msg_ops : NULL;
	ep->ep.tagged = hep->tagged ? &lgp_ep_tagged_ops : NULL;
	ep->ep.rma = hep->rma ? &lgp_ep_rma_ops : NULL;
	ep->ep.atomic = hep->atomic ? &lgp_ep_atomic_ops : NULL;
	ep->ep.collective = NULL;
	lgp_fid_register(&ep->ep.fid, &hep->fid);
	pthread_mutex_lock(&dom->lock);
	ep->next_in_dom = dom->eps;
	dom->eps = ep;
	pthread_mutex_unlock(&dom->lock);
	*out = &ep->ep;
	return 0;
}

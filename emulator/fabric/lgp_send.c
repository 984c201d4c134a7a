/* SPDX-License-Identifier: MIT */
/*
 * The send path of send-type operations: the delay engine (lgp_engine.h)
 * decides, this file acts on libfabric objects.
 *
 * An operation that finds nothing to wait for (L = 0, the port free,
 * nothing queued ahead on its endpoint) is posted at once with the
 * application's own buffers and context: no copy.  Otherwise its payload
 * is copied, its local completion is synthesised for the time it has left
 * the port, and it waits in the domain's delay queue until then + L.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_cm.h>

#include <lgp/clock.h>

#include "lgp_av.h"
#include "lgp_cq.h"
#include "lgp_domain.h"
#include "lgp_engine.h"
#include "lgp_ep.h"
#include "lgp_fid.h"
#include "lgp_fabric.h"
#include "lgp_log.h"
#include "lgp_progress.h"
#include "lgp_req.h"
#include "lgp_send.h"

void lgp_ep_count(struct lgp_ep *ep, size_t len)
{
	lgp_stats_add(&ep->dom->fab->stats, LGP_STAT_MSGS, 1);
	lgp_stats_add(&ep->dom->fab->stats, LGP_STAT_BYTES, len);
}

static bool lgp_req_returns_data(const struct lgp_req *req)
{
	return req->kind == LGP_OP_READ || req->kind == LGP_OP_FETCH_ATOMIC ||
	       req->kind == LGP_OP_COMPARE_ATOMIC;
}

/*
 * Operations whose completion the application may only see once the real
 * one has arrived: data coming back, and sends that asked to complete
 * only when the peer has the message (FI_TRANSMIT_COMPLETE,
 * FI_DELIVERY_COMPLETE) - such a completion includes L by its meaning.
 */
static bool lgp_req_completes_late(const struct lgp_req *req)
{
	return lgp_req_returns_data(req) ||
	       (req->flags & (FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE));
}

static uint64_t lgp_req_cq_flags(const struct lgp_req *req)
{
	switch (req->kind) {
	case LGP_OP_MSG:
		return FI_SEND | FI_MSG;
	case LGP_OP_TAGGED:
		return FI_SEND | FI_TAGGED;
	case LGP_OP_WRITE:
		return FI_RMA | FI_WRITE;
	case LGP_OP_READ:
		return FI_RMA | FI_READ;
	case LGP_OP_ATOMIC:
		return FI_ATOMIC | FI_WRITE;
	default:
		return FI_ATOMIC | FI_READ;
	}
}

/*
 * Whether every vector the request would keep by reference fits a
 * deferred request's copies (LGP_REQ_IOV_MAX).  Sources that are copied
 * into the payload (messages, writes, plain atomics) may be of any length.
 */
static bool lgp_req_fits(const struct lgp_req *req)
{
	if (req->rma_count > LGP_REQ_IOV_MAX)
		return false;
	switch (req->kind) {
	case LGP_OP_READ:
		return req->count <= LGP_REQ_IOV_MAX;
	case LGP_OP_FETCH_ATOMIC:
	case LGP_OP_COMPARE_ATOMIC:
		return req->count <= LGP_REQ_IOV_MAX &&
		       req->res_count <= LGP_REQ_IOV_MAX &&
		       req->cmp_count <= LGP_REQ_IOV_MAX;
	default:
		return true;
	}
}

/* Copies a vector of n elements into the request's own, vec following. */
#define LGP_REQ_KEEP(vec, own, n)					\
	do {								\
		if (n)							\
			memcpy((own), (vec), (n) * sizeof(*(own)));	\
		(vec) = (own);						\
	} while (0)

/* Copies a descriptor vector, which the application may leave NULL. */
static void lgp_req_keep_desc(void ***desc, void **own, size_t n)
{
	if (*desc && n) {
		memcpy(own, *desc, n * sizeof(*own));
		*desc = own;
	}
}

/*
 * Takes ownership of the operation so the application may reuse its
 * buffers and vectors once the call returns, as after a real send's local
 * completion.  The source data is copied into one payload buffer, whose
 * descriptor is NULL.  Reads and fetching atomics write into the
 * application's buffers, and take their operands from them: the
 * application may not touch those until their completion anyway, which
 * waits for the real one, so only their vectors are copied.
 */
static int lgp_req_own(struct lgp_req *req)
{
	struct lgp_req_vecs *v = lgp_req_vecs(req);
	size_t i, n, esz, off = 0;
	char *p;

	switch (req->kind) {
	case LGP_OP_MSG:
	case LGP_OP_TAGGED:
		break;
	case LGP_OP_WRITE:
	case LGP_OP_READ:
		LGP_REQ_KEEP(req->rma_iov, v->rma_iov, req->rma_count);
		break;
	default:
		LGP_REQ_KEEP(req->rma_ioc, v->rma_ioc, req->rma_count);
		break;
	}
	switch (req->kind) {
	case LGP_OP_READ:
		LGP_REQ_KEEP(req->iov, v->iov, req->count);
		lgp_req_keep_desc(&req->desc, v->desc, req->count);
		return 0;
	case LGP_OP_COMPARE_ATOMIC:
		LGP_REQ_KEEP(req->cmp, v->cmp, req->cmp_count);
		lgp_req_keep_desc(&req->cmp_desc, v->cmp_desc, req->cmp_count);
		/* fall through */
	case LGP_OP_FETCH_ATOMIC:
		LGP_REQ_KEEP(req->res, v->res, req->res_count);
		lgp_req_keep_desc(&req->res_desc, v->res_desc, req->res_count);
		LGP_REQ_KEEP(req->ioc, v->ioc, req->count);
		lgp_req_keep_desc(&req->desc, v->desc, req->count);
		return 0;
	case LGP_OP_ATOMIC:
		/* The operands of all elements, in order, as one fi_ioc. */
		p = lgp_payload_alloc(req->len, &req->payload_cap);
		if (!p)
			return -FI_ENOMEM;
		esz = lgp_atomic_size(req->datatype);
		for (i = n = 0; i < req->count; i++) {
			memcpy(p + n * esz, req->ioc[i].addr,
			       req->ioc[i].count * esz);
			n += req->ioc[i].count;
		}
		v->ioc[0] = (struct fi_ioc) { .addr = p, .count = n };
		req->ioc = v->ioc;
		break;
	default:
		p = lgp_payload_alloc(req->len, &req->payload_cap);
		if (!p)
			return -FI_ENOMEM;
		for (i = 0; i < req->count; i++) {
			memcpy(p + off, req->iov[i].iov_base, req->iov[i].iov_len);
			off += req->iov[i].iov_len;
		}
		v->iov[0] = (struct iovec) { .iov_base = p, .iov_len = req->len };
		req->iov = v->iov;
		break;
	}
	req->payload = p;
	v->desc[0] = NULL;
	req->desc = v->desc;
	req->count = 1;
	return 0;
}

/*
 * A vector longer than a request's copies: says so on stderr once and
 * refuses, so the program fails loudly rather than run undelayed.
 * libfabric gives the shim no earlier point: lengths are per call.
 */
static ssize_t lgp_refuse_vector(void)
{
	static bool said;

	if (!__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
		fprintf(stderr, "loggp: an RMA or atomic vector of more than %d "
			"elements is not supported beneath active delays: "
			"-FI_ENOSYS (emulator/fabric/README.md)\n",
			LGP_REQ_IOV_MAX);
	return -FI_ENOSYS;
}

/*
 * Deferred operations small enough go out through the inject calls,
 * unless a counter must count them (tcp's MSG endpoints count no inject)
 * or they have more remote segments than an inject call names.
 */
static bool lgp_req_injectable(const struct lgp_req *req)
{
	if (req->deferred)
		return !lgp_req_completes_late(req) && !req->ep->flushing &&
		       !req->ep->tx_counted && req->rma_count <= 1 &&
		       req->len <= req->ep->inject_size;
	return req->inject_call;
}

static ssize_t lgp_req_post_inject(struct lgp_req *req, struct fid_ep *hep)
{
	/* Messages and writes: one local buffer (inject calls, or owned). */
	const void *buf = req->kind == LGP_OP_ATOMIC ? NULL :
			  req->iov[0].iov_base;
	bool data = req->flags & FI_REMOTE_CQ_DATA;

	switch (req->kind) {
	case LGP_OP_MSG:
		return data ? fi_injectdata(hep, buf, req->len, req->data, req->addr) :
			      fi_inject(hep, buf, req->len, req->addr);
	case LGP_OP_TAGGED:
		return data ? fi_tinjectdata(hep, buf, req->len, req->data,
					     req->addr, req->tag) :
			      fi_tinject(hep, buf, req->len, req->addr, req->tag);
	case LGP_OP_WRITE:
		return data ? fi_inject_writedata(hep, buf, req->len, req->data,
						  req->addr, req->rma_iov[0].addr,
						  req->rma_iov[0].key) :
			      fi_inject_write(hep, buf, req->len, req->addr,
					      req->rma_iov[0].addr,
					      req->rma_iov[0].key);
	case LGP_OP_ATOMIC:
		return fi_inject_atomic(hep, req->ioc[0].addr, req->ioc[0].count,
					req->addr, req->rma_ioc[0].addr,
					req->rma_ioc[0].key, req->datatype,
					req->op);
	default:
		return -FI_EINVAL;
	}
}

ssize_t lgp_req_post(struct lgp_req *req)
{
	struct lgp_ep *ep = req->ep;
	struct fid_ep *hep;
	void *ctx;
	uint64_t flags;
	ssize_t ret;

	if (!ep) {
		lgp_req_put(req);
		return 0;
	}
	hep = ep->hep;
	if (lgp_req_injectable(req)) {
		ret = lgp_req_post_inject(req, hep);
		goto out;
	}
	/* The shim's own posts always complete, so their buffers can go. */
	ctx = req->deferred ? (void *) &req->ctx : req->app_context;
	flags = req->deferred ? (req->flags & ~FI_INJECT) | FI_COMPLETION :
				req->flags;

	switch (req->kind) {
	case LGP_OP_MSG: {
		struct fi_msg m = {
			.msg_iov = req->iov, .desc = req->desc,
			.iov_count = req->count, .addr = req->addr,
			.context = ctx, .data = req->data,
		};
		ret = fi_sendmsg(hep, &m, flags);
		break;
	}
	case LGP_OP_TAGGED: {
		struct fi_msg_tagged m = {
			.msg_iov = req->iov, .desc = req->desc,
			.iov_count = req->count, .addr = req->addr,
			.tag = req->tag, .context = ctx, .data = req->data,
		};
		ret = fi_tsendmsg(hep, &m, flags);
		break;
	}
	case LGP_OP_WRITE:
	case LGP_OP_READ: {
		struct fi_msg_rma m = {
			.msg_iov = req->iov, .desc = req->desc,
			.iov_count = req->count, .addr = req->addr,
			.rma_iov = req->rma_iov, .rma_iov_count = req->rma_count,
			.context = ctx, .data = req->data,
		};
		ret = req->kind == LGP_OP_WRITE ? fi_writemsg(hep, &m, flags) :
						  fi_readmsg(hep, &m, flags);
		break;
	}
	default: {
		struct fi_msg_atomic m = {
			.msg_iov = req->ioc, .desc = req->desc,
			.iov_count = req->count, .addr = req->addr,
			.rma_iov = req->rma_ioc, .rma_iov_count = req->rma_count,
			.datatype = req->datatype, .op = req->op,
			.context = ctx, .data = req->data,
		};
		if (req->kind == LGP_OP_ATOMIC)
			ret = fi_atomicmsg(hep, &m, flags);
		else if (req->kind == LGP_OP_FETCH_ATOMIC)
			ret = fi_fetch_atomicmsg(hep, &m, req->res,
						 req->res_desc, req->res_count,
						 flags);
		else
			ret = fi_compare_atomicmsg(hep, &m, req->cmp,
						   req->cmp_desc, req->cmp_count,
						   req->res, req->res_desc,
						   req->res_count, flags);
		break;
	}
	}
	if (!ret && req->deferred) {
		/* Its real completion (lgp_req_complete()) drops this ref. */
		req->refs++;
		ep->inflight++;
		ep->dom->inflight++;
	}
out:
	if (ret == -FI_EAGAIN || !req->deferred)
		return ret;
	lgp_eng_dequeued(&ep->port, req->len);
	if (ret) {
		LGP_WARN(FI_LOG_EP_DATA, "deferred operation failed to post: %s\n",
			 fi_strerror((int) -ret));
		lgp_stats_add(&ep->dom->fab->stats, LGP_STAT_POST_ERRORS, 1);
	}
	lgp_req_put(req);	/* the delay queue's reference */
	return 0;
}

void lgp_req_complete(struct lgp_cq *cq, struct lgp_req *req,
		      const struct fi_cq_tagged_entry *e,
		      const struct fi_cq_err_entry *err)
{
	uint64_t release;

	if (req->ep) {
		req->ep->inflight--;
		req->ep->dom->inflight--;
	}
	/*
	 * A completion that waited for the real one.  Data coming back
	 * (reads, fetching atomics) crosses the wire again: the application
	 * sees it L after the real completion, and not before its n*G on the
	 * port has passed.
	 */
	if (e && lgp_req_completes_late(req) && req->want_cqe) {
		release = lgp_now_ns();
		if (lgp_req_returns_data(req))
			release = lgp_eng_return_time(&cq->dom->eng,
						      req->return_at, release);
		if (lgp_cq_synth(cq, release, req, e->flags, e->len, e->buf,
				 e->data, e->tag) == 0)
			req->refs++;
	}
	lgp_req_put(req);
}

static ssize_t lgp_send_release(void *item)
{
	return lgp_req_post(item);
}

_Static_assert(FI_EAGAIN == EAGAIN, "the engine's -EAGAIN is libfabric's");

/*
 * The overheads are spun outside the domain's lock (lgp_send, the CQ and
 * counter reads), so a trylock that succeeds is not an outer frame's.
 */
static size_t lgp_send_try_release(struct lgp_engine *eng, uint64_t now)
{
	struct lgp_domain *dom = lgp_container_of(eng, struct lgp_domain, eng);
	size_t n;

	if (pthread_mutex_trylock(&dom->lock))
		return 0;
	n = lgp_eng_release(eng, now);
	pthread_mutex_unlock(&dom->lock);
	return n;
}

const struct lgp_eng_ops lgp_send_eng_ops = {
	.now = lgp_now_ns,
	.spin_until = lgp_spin_until,
	.try_release = lgp_send_try_release,
	.post = lgp_send_release,
};

/* What the engine needs to know of an operation on ep to dest; lock held. */
static void lgp_send_msg(const struct lgp_ep *ep, const struct lgp_req *req,
			 const struct lgp_topo_dest *dest, struct lgp_eng_msg *msg)
{
	msg->len = req->len;
	msg->returns_data = lgp_req_returns_data(req);
	msg->has_tx_cq = ep->tx_cq;
	msg->tx_cq_full = ep->tx_cq && lgp_dq_full(&ep->tx_cq->synq);
	msg->pair_latency_ns = dest ? lgp_topo_latency(ep->dom->topo, dest) : 0;
	msg->path = dest && dest->rank >= 0 && ep->dom->paths &&
		    (ep->dom->topo->gap_ns[dest->rank] ||
		     ep->dom->topo->bulk_gap_fs[dest->rank]) ?
		    &ep->dom->paths[dest->rank] : NULL;
}

struct lgp_send_av_addr {
	struct lgp_av *av;
	fi_addr_t addr;
};

static int lgp_send_av_name(void *ctx, void *name, size_t *len)
{
	struct lgp_send_av_addr *a = ctx;

	return fi_av_lookup(a->av->hav, a->addr, name, len);
}

static int lgp_send_peer_name(void *ctx, void *name, size_t *len)
{
	return fi_getpeer(((struct lgp_ep *)ctx)->hep, name, len);
}

/*
 * The topology's state of the request's destination, resolved if need
 * be (lgp_topo.h): an address of the endpoint's AV, or a connected
 * endpoint's peer.  NULL when the AV has no memory for it.  Lock held.
 */
static struct lgp_topo_dest *lgp_send_dest(struct lgp_ep *ep, const struct lgp_req *req)
{
	const struct lgp_topo *t = ep->dom->topo;
	struct lgp_send_av_addr a = { ep->av, req->addr };
	struct lgp_topo_dest *d;

	/* A resolved destination (rank >= 0) costs no clock read per send. */
	if (ep->av && req->addr != FI_ADDR_UNSPEC) {
		d = lgp_av_dest(ep->av, req->addr);
		if (d && d->rank < 0)
			lgp_topo_resolve(t, d, lgp_now_ns(), lgp_send_av_name, &a);
		return d;
	}
	if (ep->peer.rank >= 0)
		return &ep->peer;
	/* The peer finds this endpoint by its own address, which it had at connect. */
	if (ep->peer.rank == LGP_TOPO_UNKNOWN)
		lgp_topo_publish(t, &ep->hep->fid);
	lgp_topo_resolve(t, &ep->peer, lgp_now_ns(), lgp_send_peer_name, ep);
	return &ep->peer;
}

ssize_t lgp_send_submit(struct lgp_ep *ep, struct lgp_req *call)
{
	struct lgp_domain *dom = ep->dom;
	struct lgp_engine *eng = &dom->eng;
	enum lgp_eng_verdict v;
	struct lgp_eng_plan plan;
	struct lgp_topo_dest *dest;
	struct lgp_eng_msg msg;
	struct lgp_req *req;
	ssize_t ret;

	if (!lgp_req_fits(call))
		return lgp_refuse_vector();
	/*
	 * A send on an endpoint that was never enabled is the provider's to
	 * refuse at once, as without the shim; deferred, it would be
	 * reported sent and fail later.  One it accepts marks the endpoint
	 * usable.
	 */
	if (!__atomic_load_n(&ep->enabled, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&dom->lock);
		ret = lgp_req_post(call);
		if (!ret) {
			lgp_ep_enabled(ep);
			lgp_ep_count(ep, call->len);
		}
		pthread_mutex_unlock(&dom->lock);
		return ret;
	}
	/* Beneath a utility its endpoint's call spins o_s (lgp_util.h). */
	if (!dom->util_above)
		lgp_eng_send_overhead(eng);

	pthread_mutex_lock(&dom->lock);
	dest = dom->topo ? lgp_send_dest(ep, call) : NULL;
	lgp_send_msg(ep, call, dest, &msg);
	v = lgp_eng_submit(eng, &ep->port, &msg, &plan);
	if (v == LGP_ENG_WAIT) {
		/* The endpoint's caller is blocked for the delays instead. */
		pthread_mutex_unlock(&dom->lock);
		lgp_eng_wait(eng, &plan);
		pthread_mutex_lock(&dom->lock);
		lgp_send_msg(ep, call, dest, &msg);
		v = lgp_eng_decide(eng, &ep->port, &msg, &plan);
	}
	call->return_at = plan.return_at;
	switch (v) {
	case LGP_ENG_POST:
		ret = lgp_req_post(call);
		if (ret) {
			lgp_eng_cancel(&ep->port, &plan);
		} else {
			lgp_eng_posted(eng, &msg, &plan);
			if (dom->topo)
				lgp_fabric_count_pair(dom->fab, dest, &msg, &plan);
		}
		pthread_mutex_unlock(&dom->lock);
		return ret;
	case LGP_ENG_DEFER:
		break;
	default:
		pthread_mutex_unlock(&dom->lock);
		return -FI_EAGAIN;
	}

	req = lgp_req_alloc();
	if (!req) {
		lgp_eng_refuse(eng, &ep->port, &plan);
		pthread_mutex_unlock(&dom->lock);
		return -FI_EAGAIN;
	}
	*req = *call;
	req->refs = 1;
	req->deferred = true;
	ret = lgp_req_own(req);
	if (ret) {
		lgp_req_put(req);
		lgp_eng_cancel(&ep->port, &plan);
		pthread_mutex_unlock(&dom->lock);
		return ret;
	}
	if (req->want_cqe && !lgp_req_completes_late(req) && ep->tx_cq &&
	    lgp_cq_synth(ep->tx_cq, plan.left, req, lgp_req_cq_flags(req), 0,
			 NULL, 0, 0) == 0)
		req->refs++;
	lgp_eng_queue(eng, &ep->port, &msg, &plan, req);
	if (dom->topo)
		lgp_fabric_count_pair(dom->fab, dest, &msg, &plan);
	pthread_mutex_unlock(&dom->lock);
	/* After unlocking: a woken thread must not find the lock taken. */
	lgp_progress_kick(plan.post_at, plan.now);
	return 0;
}

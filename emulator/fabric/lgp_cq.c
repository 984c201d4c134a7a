/* SPDX-License-Identifier: MIT */
/*
 * Completion queue wrapper.
 *
 * While delays are active the real CQ is opened in the tagged format (the
 * superset of all formats) and every read merges two sources:
 *   - completions the shim synthesised (a deferred send has left, a
 *     deferred read's data has come back), ordered by release time;
 *   - the real CQ's entries, minus those of operations the shim posted on
 *     its own behalf, which are consumed here (lgp_req_complete()).
 * Each receive completion handed to the application costs o_r, spun after
 * the domain lock is dropped so the progress thread is not held up.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lgp/clock.h>

#include "lgp_cq.h"
#include "lgp_domain.h"
#include "lgp_engine.h"
#include "lgp_ep.h"
#include "lgp_fabric.h"
#include "lgp_fid.h"
#include "lgp_log.h"
#include "lgp_progress.h"
#include "lgp_req.h"
#include "lgp_send.h"
#include "lgp_wait.h"

#define LGP_CQ_BATCH	64
/* A send due this soon is waited for in the read rather than after it. */
#define LGP_CQ_RELEASE_SPIN_NS	2000ULL
/* Longest single block in the real sread, so timeouts stay responsive. */
#define LGP_CQ_SREAD_SLICE_MS	100

size_t lgp_cq_entry_size(enum fi_cq_format format)
{
	static const size_t size[] = {
		[FI_CQ_FORMAT_CONTEXT] = sizeof(struct fi_cq_entry),
		[FI_CQ_FORMAT_MSG] = sizeof(struct fi_cq_msg_entry),
		[FI_CQ_FORMAT_DATA] = sizeof(struct fi_cq_data_entry),
		[FI_CQ_FORMAT_TAGGED] = sizeof(struct fi_cq_tagged_entry),
	};

	return size[format];
}

static struct lgp_cq *lgp_cq_of(struct fid_cq *cq)
{
	return lgp_container_of(cq, struct lgp_cq, cq);
}

int lgp_cq_synth(struct lgp_cq *cq, uint64_t release, void *op_context,
		 uint64_t flags, size_t len, void *buf, uint64_t data,
		 uint64_t tag)
{
	struct lgp_req *req = op_context;

	req->cqe.op_context = req->app_context;
	req->cqe.flags = flags;
	req->cqe.len = len;
	req->cqe.buf = buf;
	req->cqe.data = data;
	req->cqe.tag = tag;
	req->cqe_src = FI_ADDR_NOTAVAIL;
	if (lgp_dq_push(&cq->synq, release, req))
		return -FI_EAGAIN;
	if (cq->signals && release < cq->dom->next_signal) {
		__atomic_store_n(&cq->dom->next_signal, release, __ATOMIC_RELEASE);
		lgp_progress_kick(release, lgp_now_ns());
	}
	return 0;
}

/* The head's insertion number, plus one so that 0 means "none". */
static uint64_t lgp_cq_head_id(const struct lgp_cq *cq)
{
	return lgp_dq_size(&cq->synq) ? cq->synq.heap[0].seq + 1 : 0;
}

void lgp_domain_signal(struct lgp_domain *dom, uint64_t now)
{
	uint64_t next = UINT64_MAX, head;
	struct lgp_cq *cq;

	for (cq = dom->cqs; cq; cq = cq->next_in_dom) {
		if (!cq->signals || !lgp_dq_size(&cq->synq) ||
		    lgp_cq_head_id(cq) == cq->signalled)
			continue;
		head = lgp_dq_next(&cq->synq);
		if (head > now) {
			if (head < next)
				next = head;
			continue;
		}
		/*
		 * Once per head: a waiter woken by it reads every due entry,
		 * and the next head signals again when it falls due.
		 */
		cq->signalled = lgp_cq_head_id(cq);
		fi_cq_signal(cq->hcq);
	}
	__atomic_store_n(&dom->next_signal, next, __ATOMIC_RELEASE);
}

bool lgp_cq_ready(struct lgp_cq *cq, uint64_t *next)
{
	uint64_t head = UINT64_MAX;

	if (cq->shim) {
		pthread_mutex_lock(&cq->dom->lock);
		lgp_eng_release(&cq->dom->eng, lgp_now_ns());
		head = lgp_dq_next(&cq->synq);
		pthread_mutex_unlock(&cq->dom->lock);
	}
	if (next)
		*next = head;
	return head <= lgp_now_ns();
}

bool lgp_cq_has_news(struct lgp_cq *cq)
{
	bool news;

	pthread_mutex_lock(&cq->dom->lock);
	lgp_eng_release(&cq->dom->eng, lgp_now_ns());
	/* A CQ of no enabled endpoint holds nothing (and shm may crash). */
	if (cq->drivable)
		lgp_cq_drain(cq);
	news = cq->err_held || lgp_dq_next(&cq->synq) <= lgp_now_ns();
	pthread_mutex_unlock(&cq->dom->lock);
	return news;
}

/* Widens a real entry of real_format into a tagged entry. */
static void lgp_cq_widen(const struct lgp_cq *cq, const char *raw, size_t i,
			 struct fi_cq_tagged_entry *e)
{
	size_t sz = lgp_cq_entry_size(cq->real_format);

	memset(e, 0, sizeof(*e));
	memcpy(e, raw + i * sz, sz);
}

/*
 * Widens real entry i into *e; if it completes an operation the shim posted
 * on its own behalf, consumes it there and returns true.
 */
static bool lgp_cq_consume_own(struct lgp_cq *cq, const char *raw, size_t i,
			       struct fi_cq_tagged_entry *e)
{
	struct lgp_req *req;

	lgp_cq_widen(cq, raw, i, e);
	req = lgp_req_from_context(e->op_context);
	if (!req)
		return false;
	lgp_req_complete(cq, req, e, NULL);
	return true;
}

/*
 * Moves real entries into the application's buffer, consuming the shim's
 * own.  Returns how many were stored; counts receives in *nrecv.
 */
static size_t lgp_cq_take(struct lgp_cq *cq, const char *raw, ssize_t got,
			  const fi_addr_t *hsrc, char *out, size_t n,
			  fi_addr_t *src, size_t *nrecv)
{
	struct fi_cq_tagged_entry e;
	ssize_t i;

	for (i = 0; i < got; i++) {
		if (lgp_cq_consume_own(cq, raw, (size_t) i, &e))
			continue;
		memcpy(out + n * cq->app_size, &e, cq->app_size);
		if (src)
			src[n] = hsrc[i];
		if (e.flags & FI_RECV)
			(*nrecv)++;
		n++;
	}
	return n;
}

/*
 * Reads the real CQ's error entries until one is the application's, which
 * is held for its fi_cq_readerr; returns whether one is held.  An error of
 * an operation the shim posted is the application's too, under its own
 * context, when the application asked for a completion (it may have seen
 * a synthesised success first: the README's known limits).  One it asked
 * none for (an inject) is nobody's to read: a layer above such as rxm
 * takes an error with no context for a crash.  It is counted and logged.
 * Lock held.
 */
static bool lgp_cq_take_err(struct lgp_cq *cq)
{
	struct lgp_req *req;

	while (!cq->err_held) {
		memset(&cq->err, 0, sizeof(cq->err));
		if (fi_cq_readerr(cq->hcq, &cq->err, 0) <= 0)
			return false;
		/* The provider's err_data lives only until its next readerr. */
		cq->err.err_data = NULL;
		cq->err.err_data_size = 0;
		req = lgp_req_from_context(cq->err.op_context);
		if (!req) {
			cq->err_held = true;
			break;
		}
		if (req->want_cqe) {
			cq->err.op_context = req->app_context;
			cq->err_held = true;
		} else {
			LGP_WARN(FI_LOG_CQ, "a deferred operation without a "
				 "completion failed: %s\n",
				 fi_strerror(cq->err.err));
			lgp_stats_add(&cq->dom->fab->stats, LGP_STAT_POST_ERRORS, 1);
		}
		lgp_req_complete(cq, req, NULL, &cq->err);
	}
	return true;
}

/*
 * A real read that returned -FI_EAVAIL: what the application's read
 * returns after the shim has looked at the errors.
 */
static ssize_t lgp_cq_avail(struct lgp_cq *cq)
{
	return lgp_cq_take_err(cq) ? -FI_EAVAIL : -FI_EAGAIN;
}

/*
 * One batch of the real CQ with the entries' source addresses where the
 * CQ keeps them (FI_ADDR_NOTAVAIL where it does not).
 */
static ssize_t lgp_cq_read_src(struct lgp_cq *cq, void *raw, size_t n,
			       fi_addr_t *src)
{
	ssize_t got;
	size_t i;

	for (i = 0; i < n; i++)
		src[i] = FI_ADDR_NOTAVAIL;
	got = fi_cq_readfrom(cq->hcq, raw, n, src);
	return got == -FI_ENOSYS ? fi_cq_read(cq->hcq, raw, n) : got;
}

void lgp_cq_drain(struct lgp_cq *cq)
{
	char raw[LGP_CQ_BATCH * sizeof(struct fi_cq_tagged_entry)];
	fi_addr_t src[LGP_CQ_BATCH];
	struct fi_cq_tagged_entry e;
	struct lgp_req *keep;
	ssize_t got, i;
	int errs = 0;

	while (!cq->err_held) {
		got = lgp_cq_read_src(cq, raw, LGP_CQ_BATCH, src);
		if (got == -FI_EAVAIL && lgp_cq_avail(cq) == -FI_EAGAIN &&
		    ++errs < LGP_CQ_BATCH)
			continue;
		for (i = 0; i < got; i++) {
			if (lgp_cq_consume_own(cq, raw, (size_t) i, &e))
				continue;
			/*
			 * The application's: due now, so behind every
			 * synthesised completion already due.  Those happened
			 * first (a request's send completion before its
			 * response), and ofi_rxm reuses a request's buffer on
			 * the response: read in the other order, it takes the
			 * late send completion for the operation that reused it.
			 */
			keep = lgp_req_alloc();
			if (!keep) {
				LGP_WARN(FI_LOG_CQ, "completion lost while draining\n");
				continue;
			}
			keep->app_context = e.op_context;
			if (lgp_cq_synth(cq, lgp_now_ns(), keep, e.flags, e.len,
					 e.buf, e.data, e.tag)) {
				LGP_WARN(FI_LOG_CQ, "completion lost while draining\n");
				lgp_req_put(keep);
				continue;
			}
			keep->cqe_src = src[i];
		}
		if (got != LGP_CQ_BATCH)
			break;
	}
}

/* Synthesised completions that are due, then the real CQ; lock held. */
static ssize_t lgp_cq_poll(struct lgp_cq *cq, void *buf, size_t count,
			   fi_addr_t *src, size_t *nrecv)
{
	char raw[LGP_CQ_BATCH * sizeof(struct fi_cq_tagged_entry)];
	fi_addr_t hsrc[LGP_CQ_BATCH];
	char *out = buf;
	struct lgp_req *req;
	uint64_t now = lgp_now_ns(), next;
	size_t n = 0, want;
	ssize_t got = 0;
	int errs = 0;

	/*
	 * Sends due now go out before the real read: on a provider whose
	 * read is a system call (tcp, ofi_rxm's progress) releasing only
	 * after it made every deferred message that much later.  One due
	 * within LGP_CQ_RELEASE_SPIN_NS is waited for here, or it would
	 * wait for the next call, a whole real read later.
	 */
	next = lgp_eng_next_release(&cq->dom->eng);
	if (next > now && next - now <= LGP_CQ_RELEASE_SPIN_NS) {
		lgp_spin_until(next);
		now = lgp_now_ns();
	}
	lgp_eng_release(&cq->dom->eng, now);
	while (n < count && (req = lgp_dq_pop_due(&cq->synq, now))) {
		memcpy(out + n * cq->app_size, &req->cqe, cq->app_size);
		if (src)
			src[n] = req->cqe_src;
		if (req->cqe.flags & FI_RECV)
			(*nrecv)++;
		n++;
		lgp_req_put(req);
	}
	/* A zero-count read is how applications drive progress: pass it on. */
	if (!count && !cq->err_held)
		got = fi_cq_read(cq->hcq, NULL, 0);
	if (got == -FI_EAVAIL)
		got = lgp_cq_avail(cq);
	while (n < count && !cq->err_held) {
		want = count - n < LGP_CQ_BATCH ? count - n : LGP_CQ_BATCH;
		got = src ? fi_cq_readfrom(cq->hcq, raw, want, hsrc) :
			    fi_cq_read(cq->hcq, raw, want);
		if (got == -FI_EAVAIL && (got = lgp_cq_avail(cq)) == -FI_EAGAIN &&
		    ++errs < LGP_CQ_BATCH)
			continue;
		if (got <= 0)
			break;
		n = lgp_cq_take(cq, raw, got, hsrc, out, n, src, nrecv);
		if ((size_t) got < want)
			break;
	}
	/*
	 * And after it: the read has progressed the provider (completed
	 * sends, connection set-up), so a post refused above finds room.
	 */
	lgp_eng_release(&cq->dom->eng, lgp_now_ns());
	if (cq->signals)
		lgp_domain_signal(cq->dom, lgp_now_ns());
	if (n)
		return (ssize_t) n;
	if (cq->err_held)
		return -FI_EAVAIL;
	if (!count)
		return got;
	return got < 0 ? got : -FI_EAGAIN;
}

static void lgp_cq_charge(struct lgp_cq *cq, size_t nrecv)
{
	if (!nrecv || cq->dom->util_above)
		return;
	lgp_stats_add(&cq->dom->fab->stats, LGP_STAT_RECV_MSGS, nrecv);
	lgp_eng_recv_overhead(&cq->dom->eng, nrecv);
}

static ssize_t lgp_cq_readfrom(struct fid_cq *fcq, void *buf, size_t count,
			       fi_addr_t *src_addr)
{
	struct lgp_cq *cq = lgp_cq_of(fcq);
	size_t nrecv = 0;
	ssize_t ret;

	if (!cq->shim)
		return src_addr ? fi_cq_readfrom(cq->hcq, buf, count, src_addr) :
				  fi_cq_read(cq->hcq, buf, count);
	pthread_mutex_lock(&cq->dom->lock);
	ret = lgp_cq_poll(cq, buf, count, src_addr, &nrecv);
	pthread_mutex_unlock(&cq->dom->lock);
	lgp_cq_charge(cq, nrecv);
	return ret;
}

static ssize_t lgp_cq_read(struct fid_cq *fcq, void *buf, size_t count)
{
	return lgp_cq_readfrom(fcq, buf, count, NULL);
}

static ssize_t lgp_cq_readerr(struct fid_cq *fcq, struct fi_cq_err_entry *buf,
			      uint64_t flags)
{
	struct lgp_cq *cq = lgp_cq_of(fcq);
	void *data = buf->err_data;
	ssize_t ret = 1;

	if (!cq->shim)
		return fi_cq_readerr(cq->hcq, buf, flags);
	pthread_mutex_lock(&cq->dom->lock);
	if (lgp_cq_take_err(cq)) {
		*buf = cq->err;
		/* A caller's err_data buffer stays its own, with 0 bytes. */
		if (data)
			buf->err_data = data;
		cq->err_held = false;
	} else {
		ret = -FI_EAGAIN;
	}
	pthread_mutex_unlock(&cq->dom->lock);
	return ret;
}

/*
 * Blocks in the real CQ for one entry.  Called without the domain lock:
 * nothing synthesised is pending, so only the real CQ can produce.
 */
static ssize_t lgp_cq_sread_one(struct lgp_cq *cq, void *buf, fi_addr_t *src,
				const void *cond, int timeout_ms)
{
	char raw[sizeof(struct fi_cq_tagged_entry)];
	fi_addr_t hsrc;
	size_t n, nrecv = 0;
	ssize_t got;

	got = src ? fi_cq_sreadfrom(cq->hcq, raw, 1, &hsrc, cond, timeout_ms) :
		    fi_cq_sread(cq->hcq, raw, 1, cond, timeout_ms);
	if (got == -FI_ENOSYS) {
		sched_yield();
		return -FI_EAGAIN;
	}
	if (got == -FI_EAVAIL) {
		pthread_mutex_lock(&cq->dom->lock);
		got = lgp_cq_avail(cq);
		pthread_mutex_unlock(&cq->dom->lock);
	}
	if (got <= 0)
		return got;
	pthread_mutex_lock(&cq->dom->lock);
	n = lgp_cq_take(cq, raw, got, &hsrc, buf, 0, src, &nrecv);
	pthread_mutex_unlock(&cq->dom->lock);
	lgp_cq_charge(cq, nrecv);
	return n ? (ssize_t) n : -FI_EAGAIN;
}

/*
 * Blocking read.  With nothing synthesised pending the real CQ's own wait
 * is used (no CPU burnt); otherwise the wait is a yield loop up to the next
 * synthesised release.
 */
static ssize_t lgp_cq_sreadfrom(struct fid_cq *fcq, void *buf, size_t count,
				fi_addr_t *src_addr, const void *cond,
				int timeout)
{
	struct lgp_cq *cq = lgp_cq_of(fcq);
	uint64_t deadline, now;
	size_t nrecv;
	ssize_t ret;
	int slice;

	if (!cq->shim)
		return src_addr ?
		       fi_cq_sreadfrom(cq->hcq, buf, count, src_addr, cond, timeout) :
		       fi_cq_sread(cq->hcq, buf, count, cond, timeout);
	deadline = timeout < 0 ? UINT64_MAX :
		   lgp_now_ns() + (uint64_t) timeout * 1000000ULL;
	for (;;) {
		nrecv = 0;
		pthread_mutex_lock(&cq->dom->lock);
		ret = lgp_cq_poll(cq, buf, count, src_addr, &nrecv);
		bool idle = !lgp_dq_size(&cq->synq);
		pthread_mutex_unlock(&cq->dom->lock);
		if (ret != -FI_EAGAIN) {
			lgp_cq_charge(cq, nrecv);
			return ret;
		}
		/* Cut short by the application's fi_cq_signal, as the real one. */
		if (__atomic_exchange_n(&cq->app_signal, false, __ATOMIC_ACQ_REL))
			return -FI_EAGAIN;
		now = lgp_now_ns();
		if (now >= deadline)
			return -FI_EAGAIN;
		if (!idle) {
			sched_yield();
			continue;
		}
		slice = deadline == UINT64_MAX ? LGP_CQ_SREAD_SLICE_MS :
			(int) ((deadline - now) / 1000000ULL);
		if (slice > LGP_CQ_SREAD_SLICE_MS)
			slice = LGP_CQ_SREAD_SLICE_MS;
		ret = lgp_cq_sread_one(cq, buf, src_addr, cond, slice);
		if (ret != -FI_EAGAIN)
			return ret;
	}
}

static ssize_t lgp_cq_sread(struct fid_cq *fcq, void *buf, size_t count,
			    const void *cond, int timeout)
{
	return lgp_cq_sreadfrom(fcq, buf, count, NULL, cond, timeout);
}

static int lgp_cq_signal(struct fid_cq *fcq)
{
	struct lgp_cq *cq = lgp_cq_of(fcq);

	/* Before the real signal, which may wake a reader that looks. */
	if (cq->shim)
		__atomic_store_n(&cq->app_signal, true, __ATOMIC_RELEASE);
	return fi_cq_signal(cq->hcq);
}

static const char *lgp_cq_strerror(struct fid_cq *fcq, int prov_errno,
				   const void *err_data, char *buf, size_t len)
{
	return fi_cq_strerror(lgp_cq_of(fcq)->hcq, prov_errno, err_data, buf, len);
}

static struct fi_ops_cq lgp_cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = lgp_cq_read,
	.readfrom = lgp_cq_readfrom,
	.readerr = lgp_cq_readerr,
	.sread = lgp_cq_sread,
	.sreadfrom = lgp_cq_sreadfrom,
	.signal = lgp_cq_signal,
	.strerror = lgp_cq_strerror,
};

/*
 * A provider may let a CQ close while endpoints are still bound to it
 * (util providers refuse with -FI_EBUSY): the endpoints forget it.
 */
static int lgp_cq_close(struct fid *fid)
{
	struct lgp_cq *cq = lgp_container_of(fid, struct lgp_cq, cq.fid);
	struct lgp_req *req;
	struct lgp_cq **p;
	struct lgp_ep *ep;
	int ret;

	ret = fi_close(&cq->hcq->fid);
	if (ret)
		return ret;
	if (cq->wait)
		lgp_wait_del_cq(cq->wait, cq);
	pthread_mutex_lock(&cq->dom->lock);
	for (p = &cq->dom->cqs; *p; p = &(*p)->next_in_dom) {
		if (*p == cq) {
			*p = cq->next_in_dom;
			break;
		}
	}
	for (ep = cq->dom->eps; ep; ep = ep->next_in_dom) {
		if (ep->tx_cq == cq)
			ep->tx_cq = NULL;
		if (ep->rx_cq == cq)
			ep->rx_cq = NULL;
	}
	pthread_mutex_unlock(&cq->dom->lock);
	while ((req = lgp_dq_pop_due(&cq->synq, UINT64_MAX)))
		lgp_req_put(req);
	lgp_dq_fini(&cq->synq);
	free(cq);
	return 0;
}

struct fi_ops lgp_cq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lgp_cq_close,
	.bind = lgp_fid_bind,
	.control = lgp_fid_control,
	.ops_open = lgp_fid_ops_open,
	.tostr = lgp_fid_tostr,
	.ops_set = lgp_fid_ops_set,
};

int lgp_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		struct fid_cq **out, void *context)
{
	struct lgp_domain *dom = lgp_container_of(domain, struct lgp_domain, domain);
	struct fi_cq_attr hattr = *attr;
	struct lgp_cq *cq;
	int ret;

	if (attr->format > FI_CQ_FORMAT_TAGGED)
		return -FI_EINVAL;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -FI_ENOMEM;
	cq->dom = dom;
	cq->shim = dom->active;
	/* As libfabric's own utility CQs do, unspecified means context. */
	cq->app_format = attr->format == FI_CQ_FORMAT_UNSPEC ?
			 FI_CQ_FORMAT_CONTEXT : attr->format;
	cq->app_size = lgp_cq_entry_size(cq->app_format);
	cq->real_format = cq->app_format;
	cq->signals = attr->wait_obj != FI_WAIT_NONE;
	if (attr->wait_obj == FI_WAIT_SET && attr->wait_set &&
	    attr->wait_set->fid.ops == &lgp_wait_fi_ops) {
		cq->wait = lgp_container_of(attr->wait_set, struct lgp_wait, wait);
		hattr.wait_set = cq->wait->hwait;
	}

	if (cq->shim) {
		ret = lgp_dq_init(&cq->synq, LGP_CQ_QUEUE_DEPTH);
		if (ret) {
			ret = -FI_ENOMEM;
			goto err_free;
		}
		/* Flags are needed to tell receives apart (o_r). */
		hattr.format = FI_CQ_FORMAT_TAGGED;
		ret = fi_cq_open(dom->hdomain, &hattr, &cq->hcq, context);
		if (!ret)
			cq->real_format = FI_CQ_FORMAT_TAGGED;
		else
			hattr.format = attr->format;
	}
	if (!cq->hcq) {
		ret = fi_cq_open(dom->hdomain, &hattr, &cq->hcq, context);
		if (ret)
			goto err_queue;
	}
	pthread_mutex_lock(&dom->lock);
	cq->next_in_dom = dom->cqs;
	dom->cqs = cq;
	pthread_mutex_unlock(&dom->lock);
	if (cq->wait)
		lgp_wait_add_cq(cq->wait, cq);
	cq->cq.fid.fclass = FI_CLASS_CQ;
	cq->cq.fid.context = context;
	cq->cq.fid.ops = &lgp_cq_fi_ops;
	cq->cq.ops = &lgp_cq_ops;
	*out = &cq->cq;
	return 0;

err_queue:
	lgp_dq_fini(&cq->synq);
err_free:
	free(cq);
	return ret;
}

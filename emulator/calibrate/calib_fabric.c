/* SPDX-License-Identifier: MIT */
/* libfabric endpoint, buffers and timed polling; contracts in calib_fabric.h. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>

#include "calib_clock.h"
#include "calib_err.h"
#include "calib_fabric.h"

#define CALIB_TX_BATCH 16
/* Empty polls between two looks at the clock for the timeout. */
#define CALIB_TIMEOUT_POLLS 1024

static int calib_fabric_fail(const char *what, int ret)
{
	calib_err("%s: %s", what, fi_strerror(-ret));
	return ret;
}

static int calib_fabric_getinfo(struct calib_fabric *f,
				const struct calib_opts *opts)
{
	struct fi_info *hints;
	int ret;

	hints = fi_allocinfo();
	if (!hints)
		return -ENOMEM;
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG;
	/* Every operation carries its own fi_context2, so both modes are fine. */
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	if (opts->provider) {
		hints->fabric_attr->prov_name = strdup(opts->provider);
		if (!hints->fabric_attr->prov_name) {
			fi_freeinfo(hints);
			return -ENOMEM;
		}
	}
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &f->info);
	fi_freeinfo(hints);
	if (ret == -FI_ENODATA) {
		calib_err("provider '%s' not found or offers no RDM endpoint with FI_MSG (see fi_info -l)",
			  opts->provider ? opts->provider : "(any)");
		return ret;
	}
	return ret ? calib_fabric_fail("fi_getinfo", ret) : 0;
}

static int calib_fabric_buffers(struct calib_fabric *f, size_t max_size,
				unsigned nrecv)
{
	size_t len;
	unsigned i;
	int ret;

	f->slot = max_size ? (max_size + 63) & ~(size_t)63 : 64;
	f->nrecv = nrecv;
	len = f->slot * (nrecv + 1);
	f->buf = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	f->rx_ctx = calloc(nrecv, sizeof(*f->rx_ctx));
	if (!f->buf || !f->rx_ctx)
		return -ENOMEM;
	memset(f->buf, 0xa5, len);
	for (i = 0; i < CALIB_TX_DEPTH; i++)
		f->tx_free[i] = &f->tx_ctx[i];
	f->tx_nfree = CALIB_TX_DEPTH;

	if (!(f->info->domain_attr->mr_mode & FI_MR_LOCAL))
		return 0;
	ret = fi_mr_reg(f->domain, f->buf, len, FI_SEND | FI_RECV, 0, 0, 0,
			&f->mr, NULL);
	if (ret)
		return calib_fabric_fail("fi_mr_reg", ret);
	f->desc = fi_mr_desc(f->mr);
	return 0;
}

int calib_fabric_open(struct calib_fabric *f, const struct calib_opts *opts,
		      size_t max_size, unsigned nrecv)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT,
				      .wait_obj = FI_WAIT_NONE };
	struct fi_av_attr av_attr = { .type = FI_AV_MAP };
	int ret;

	memset(f, 0, sizeof(*f));
	f->peer = FI_ADDR_UNSPEC;
	f->timeout_ns = (uint64_t)opts->timeout_s * 1000000000ULL;
	f->spin_polls = opts->spin_polls;
	ret = calib_fabric_getinfo(f, opts);
	if (ret)
		return ret;

	ret = fi_fabric(f->info->fabric_attr, &f->fabric, NULL);
	if (ret)
		return calib_fabric_fail("fi_fabric", ret);
	/* A shim refusing a bad LOGGP_* value fails here, after its own line. */
	ret = fi_domain(f->fabric, f->info, &f->domain, NULL);
	if (ret)
		return calib_fabric_fail("fi_domain", ret);
	if (f->info->domain_attr->av_type != FI_AV_UNSPEC)
		av_attr.type = f->info->domain_attr->av_type;
	ret = fi_av_open(f->domain, &av_attr, &f->av, NULL);
	if (ret)
		return calib_fabric_fail("fi_av_open", ret);
	ret = fi_cq_open(f->domain, &cq_attr, &f->txcq, NULL);
	if (!ret)
		ret = fi_cq_open(f->domain, &cq_attr, &f->rxcq, NULL);
	if (ret)
		return calib_fabric_fail("fi_cq_open", ret);
	ret = fi_endpoint(f->domain, f->info, &f->ep, NULL);
	if (ret)
		return calib_fabric_fail("fi_endpoint", ret);
	ret = fi_ep_bind(f->ep, &f->txcq->fid, FI_TRANSMIT);
	if (!ret)
		ret = fi_ep_bind(f->ep, &f->rxcq->fid, FI_RECV);
	if (!ret)
		ret = fi_ep_bind(f->ep, &f->av->fid, 0);
	if (ret)
		return calib_fabric_fail("fi_ep_bind", ret);
	ret = fi_enable(f->ep);
	if (ret)
		return calib_fabric_fail("fi_enable", ret);
	ret = calib_fabric_buffers(f, max_size, nrecv);
	if (ret == -ENOMEM)
		calib_err("cannot allocate %u buffers of %zu bytes", nrecv + 1,
			  max_size);
	return ret;
}

const char *calib_fabric_provider(const struct calib_fabric *f)
{
	return f->info->fabric_attr->prov_name;
}

int calib_fabric_getname(struct calib_fabric *f, void *name, size_t *len)
{
	int ret = fi_getname(&f->ep->fid, name, len);

	return ret ? calib_fabric_fail("fi_getname", ret) : 0;
}

int calib_fabric_set_peer(struct calib_fabric *f, const void *name)
{
	int ret = fi_av_insert(f->av, name, 1, &f->peer, 0, NULL);

	if (ret != 1)
		return calib_fabric_fail("fi_av_insert", ret < 0 ? ret : -FI_EINVAL);
	return 0;
}

int calib_fabric_post_recvs(struct calib_fabric *f, unsigned count)
{
	unsigned slot;
	ssize_t ret;

	while (count--) {
		slot = f->rx_next;
		ret = fi_recv(f->ep, f->buf + f->slot * (slot + 1), f->slot,
			      f->desc, FI_ADDR_UNSPEC, &f->rx_ctx[slot]);
		if (ret)
			return calib_fabric_fail("fi_recv", (int)ret);
		f->rx_next = (slot + 1) % f->nrecv;
	}
	return 0;
}

static int calib_fabric_cq_error(struct fid_cq *cq, const char *which)
{
	struct fi_cq_err_entry err = { 0 };

	if (fi_cq_readerr(cq, &err, 0) < 0)
		return calib_fabric_fail("fi_cq_readerr", -FI_EIO);
	calib_err("%s completion error: %s", which, fi_strerror(err.err));
	return -FI_EIO;
}

/* Reaps send completions; returns how many, or a negative error. */
static int calib_fabric_reap_tx(struct calib_fabric *f)
{
	struct fi_cq_entry comp[CALIB_TX_BATCH];
	ssize_t ret;
	ssize_t i;

	ret = fi_cq_read(f->txcq, comp, CALIB_TX_BATCH);
	if (ret == -FI_EAGAIN)
		return 0;
	if (ret == -FI_EAVAIL)
		return calib_fabric_cq_error(f->txcq, "send");
	if (ret < 0)
		return calib_fabric_fail("fi_cq_read", (int)ret);
	for (i = 0; i < ret; i++)
		f->tx_free[f->tx_nfree++] = comp[i].op_context;
	return (int)ret;
}

/*
 * Bookkeeping of an idle wait: yields after spin_polls empty polls and
 * reports a timeout once the deadline has passed.
 */
static int calib_fabric_idle(struct calib_fabric *f, unsigned *empty,
			     uint64_t start, const char *what)
{
	++*empty;
	if (f->spin_polls && !(*empty % f->spin_polls))
		sched_yield();
	if (*empty % CALIB_TIMEOUT_POLLS)
		return 0;
	if (calib_now_ns() - start > f->timeout_ns) {
		calib_err("timed out after %llu s waiting for %s",
			  (unsigned long long)(f->timeout_ns / 1000000000ULL),
			  what);
		return -FI_ETIMEDOUT;
	}
	return 0;
}

int calib_fabric_send(struct calib_fabric *f, size_t len, uint64_t *call_ns)
{
	uint64_t start = calib_now_ns(), t0, t1;
	unsigned empty = 0;
	ssize_t ret;

	for (;;) {
		if (f->tx_nfree) {
			t0 = calib_now_ns();
			ret = fi_send(f->ep, f->buf, len, f->desc, f->peer,
				      f->tx_free[f->tx_nfree - 1]);
			t1 = calib_now_ns();
			if (!ret)
				break;
			if (ret != -FI_EAGAIN)
				return calib_fabric_fail("fi_send", (int)ret);
		}
		ret = calib_fabric_reap_tx(f);
		if (ret < 0)
			return (int)ret;
		if (!ret) {
			ret = calib_fabric_idle(f, &empty, start, "send credit");
			if (ret)
				return (int)ret;
		}
	}
	f->tx_nfree--;
	if (call_ns)
		*call_ns = t1 - t0;
	return 0;
}

int calib_fabric_wait_recv(struct calib_fabric *f, uint64_t *read_ns)
{
	uint64_t start = calib_now_ns(), t0, t1;
	struct fi_cq_entry comp;
	unsigned empty = 0;
	ssize_t ret;

	for (;;) {
		t0 = calib_now_ns();
		ret = fi_cq_read(f->rxcq, &comp, 1);
		t1 = calib_now_ns();
		if (ret == 1)
			break;
		if (ret == -FI_EAVAIL)
			return calib_fabric_cq_error(f->rxcq, "receive");
		if (ret != -FI_EAGAIN)
			return calib_fabric_fail("fi_cq_read", (int)ret);
		ret = calib_fabric_reap_tx(f);
		if (ret < 0)
			return (int)ret;
		if (!ret) {
			ret = calib_fabric_idle(f, &empty, start,
						"a message from the peer");
			if (ret)
				return (int)ret;
		}
	}
	if (read_ns)
		*read_ns = t1 - t0;
	return 0;
}

int calib_fabric_drain(struct calib_fabric *f)
{
	uint64_t start = calib_now_ns();
	unsigned empty = 0;
	int ret;

	while (f->tx_nfree < CALIB_TX_DEPTH) {
		ret = calib_fabric_reap_tx(f);
		if (ret < 0)
			return ret;
		if (!ret) {
			ret = calib_fabric_idle(f, &empty, start,
						"send completions");
			if (ret)
				return ret;
		}
	}
	return 0;
}

void calib_fabric_close(struct calib_fabric *f)
{
	if (f->ep)
		fi_close(&f->ep->fid);
	if (f->mr)
		fi_close(&f->mr->fid);
	if (f->rxcq)
		fi_close(&f->rxcq->fid);
	if (f->txcq)
		fi_close(&f->txcq->fid);
	if (f->av)
		fi_close(&f->av->fid);
	if (f->domain)
		fi_close(&f->domain->fid);
	if (f->fabric)
		fi_close(&f->fabric->fid);
	if (f->info)
		fi_freeinfo(f->info);
	free(f->buf);
	free(f->rx_ctx);
	memset(f, 0, sizeof(*f));
}

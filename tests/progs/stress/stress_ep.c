/* SPDX-License-Identifier: MIT */
/*
 * fi_stress's objects: fabric, domain, CQ, endpoint (RDM with an AV, or
 * MSG over one connection), the registered buffer slab and window, and
 * the exchange of endpoint names and windows over MPI.
 *
 * Capabilities beyond FI_MSG are asked for only when -o uses them, so a
 * provider without them still runs the operations it has.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include "stress.h"

/* Keys for providers that take the application's (no FI_MR_PROV_KEY). */
#define STRESS_SLAB_KEY 0x51ab
#define STRESS_WIN_KEY 0x3117

/* Whether -o uses the window (RMA or atomics). */
static bool stress_uses_win(const struct stress_opts *o)
{
	return o->ops & (STRESS_RMA_OPS | STRESS_OP_BIT(STRESS_OP_ATOMIC));
}

static uint64_t stress_caps(const struct stress_opts *o)
{
	uint64_t caps = FI_MSG;

	if (o->ops & STRESS_TAGGED_OPS)
		caps |= FI_TAGGED;
	if (o->ops & STRESS_RMA_OPS)
		caps |= FI_RMA;
	if (o->ops & STRESS_OP_BIT(STRESS_OP_ATOMIC))
		caps |= FI_ATOMIC;
	return caps;
}

static struct fi_info *stress_hints(const struct stress_opts *o)
{
	struct fi_info *hints = fi_allocinfo();

	if (!hints)
		return NULL;
	hints->caps = stress_caps(o);
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->ep_attr->type = o->ep_type;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->tx_attr->msg_order = FI_ORDER_SAS;
	hints->rx_attr->msg_order = FI_ORDER_SAS;
	hints->fabric_attr->prov_name = strdup(o->prov);
	if (o->ep_type == FI_EP_MSG)
		hints->addr_format = FI_SOCKADDR_IN;
	return hints;
}

/* The window: registered for peers' writes, reads and atomics. */
static int stress_win_setup(struct stress *s)
{
	int ret;

	if (!stress_uses_win(&s->o))
		return 0;
	s->win_len = stress_win_len(s);
	s->win = calloc(1, s->win_len);
	if (!s->win)
		return -FI_ENOMEM;
	ret = fi_mr_reg(s->domain, s->win, s->win_len,
			FI_REMOTE_READ | FI_REMOTE_WRITE, 0, STRESS_WIN_KEY, 0,
			&s->win_mr, NULL);
	if (ret)
		return stress_fail(s, "fi_mr_reg window", ret);
	if (s->o.ops & STRESS_OP_BIT(STRESS_OP_ATOMIC)) {
		struct fi_atomic_attr attr;

		ret = fi_query_atomic(s->domain, FI_UINT64, FI_SUM, &attr, 0);
		if (ret)
			return stress_fail(s, "fi_query_atomic FI_UINT64 FI_SUM", ret);
	}
	return 0;
}

/* Registers the buffer slab (if the provider needs it) and posts receives. */
static int stress_bufs_setup(struct stress *s)
{
	int nrx = (s->o.ops & (STRESS_MSG_OPS & ~STRESS_TAGGED_OPS)) ? s->o.rxbufs : 0;
	int ntrx = (s->o.ops & STRESS_TAGGED_OPS) ? s->o.rxbufs : 0;
	size_t n = (size_t)nrx + ntrx + s->o.window, i;
	int ret;

	if (s->info->ep_attr->max_msg_size < s->buf_len) {
		fprintf(stderr, "fi_stress: rank %d: provider max_msg_size %zu < %zu\n",
			s->rank, s->info->ep_attr->max_msg_size, s->buf_len);
		return -FI_EMSGSIZE;
	}
	s->slab = malloc(n * s->buf_len);
	s->rx = calloc(s->o.rxbufs, sizeof(*s->rx));
	s->trx = calloc(s->o.rxbufs, sizeof(*s->trx));
	s->tx = calloc(s->o.window, sizeof(*s->tx));
	s->tx_free = calloc(s->o.window, sizeof(*s->tx_free));
	if (!s->slab || !s->rx || !s->trx || !s->tx || !s->tx_free)
		return -FI_ENOMEM;
	if (s->info->domain_attr->mr_mode & FI_MR_LOCAL) {
		uint64_t access = FI_SEND | FI_RECV;

		if (stress_uses_win(&s->o))
			access |= FI_READ | FI_WRITE;
		ret = fi_mr_reg(s->domain, s->slab, n * s->buf_len, access, 0,
				STRESS_SLAB_KEY, 0, &s->mr, NULL);
		if (ret)
			return stress_fail(s, "fi_mr_reg", ret);
		s->desc = fi_mr_desc(s->mr);
	}
	for (i = 0; i < (size_t)s->o.window; i++) {
		s->tx[i].kind = STRESS_TX;
		s->tx[i].data = s->slab + i * s->buf_len;
		stress_tx_put(s, &s->tx[s->o.window - 1 - i]);
	}
	for (i = 0; i < (size_t)nrx + ntrx; i++) {
		struct stress_buf *b = i < (size_t)nrx ? &s->rx[i] : &s->trx[i - nrx];

		b->kind = i < (size_t)nrx ? STRESS_RX : STRESS_TRX;
		b->data = s->slab + (s->o.window + i) * s->buf_len;
		ret = stress_rx_post(s, b);
		if (ret)
			return ret;
	}
	return stress_win_setup(s);
}

static int stress_ep_open(struct stress *s, struct fi_info *info)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED,
				      .wait_obj = FI_WAIT_NONE };
	int ret;

	ret = fi_domain(s->fabric, info, &s->domain, NULL);
	if (ret)
		return stress_fail(s, "fi_domain", ret);
	ret = fi_cq_open(s->domain, &cq_attr, &s->cq, NULL);
	if (ret)
		return stress_fail(s, "fi_cq_open", ret);
	ret = fi_endpoint(s->domain, info, &s->ep, NULL);
	if (ret)
		return stress_fail(s, "fi_endpoint", ret);
	ret = fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV);
	if (ret)
		return stress_fail(s, "fi_ep_bind cq", ret);
	if (info->ep_attr->type == FI_EP_MSG) {
		ret = fi_ep_bind(s->ep, &s->eq->fid, 0);
		if (ret)
			return stress_fail(s, "fi_ep_bind eq", ret);
	} else {
		struct fi_av_attr av_attr = { .type = FI_AV_MAP };

		ret = fi_av_open(s->domain, &av_attr, &s->av, NULL);
		if (ret)
			return stress_fail(s, "fi_av_open", ret);
		ret = fi_ep_bind(s->ep, &s->av->fid, 0);
		if (ret)
			return stress_fail(s, "fi_ep_bind av", ret);
	}
	ret = fi_enable(s->ep);
	if (ret)
		return stress_fail(s, "fi_enable", ret);
	return stress_bufs_setup(s);
}

/* RDM: every rank publishes its endpoint name and inserts everyone's. */
static int stress_rdm_setup(struct stress *s)
{
	char name[STRESS_ADDR_MAX] = { 0 }, *all;
	size_t len = sizeof(name);
	int i, ret;

	ret = stress_ep_open(s, s->info);
	if (ret)
		return ret;
	ret = fi_getname(&s->ep->fid, name, &len);
	if (ret)
		return stress_fail(s, "fi_getname", ret);
	all = calloc(s->nranks, STRESS_ADDR_MAX);
	s->addr = calloc(s->nranks, sizeof(*s->addr));
	if (!all || !s->addr) {
		free(all);
		return -FI_ENOMEM;
	}
	MPI_Allgather(name, STRESS_ADDR_MAX, MPI_BYTE, all, STRESS_ADDR_MAX,
		      MPI_BYTE, MPI_COMM_WORLD);
	/* one at a time: names sit STRESS_ADDR_MAX apart, not addrlen apart */
	for (i = 0; i < s->nranks; i++) {
		ret = fi_av_insert(s->av, all + (size_t)i * STRESS_ADDR_MAX, 1,
				   &s->addr[i], 0, NULL);
		if (ret != 1)
			break;
	}
	free(all);
	if (ret != 1)
		return stress_fail(s, "fi_av_insert", ret < 0 ? ret : -FI_EADDRNOTAVAIL);
	return 0;
}

static int stress_eq_wait(struct stress *s, uint32_t want, struct fi_eq_cm_entry *ent)
{
	struct fi_eq_err_entry ee = { 0 };
	uint32_t event;
	ssize_t n;

	n = fi_eq_sread(s->eq, &event, ent, sizeof(*ent), s->o.timeout_s * 1000, 0);
	if (n == -FI_EAVAIL) {
		fi_eq_readerr(s->eq, &ee, 0);
		fprintf(stderr, "fi_stress: rank %d: connection error: %s\n", s->rank,
			fi_eq_strerror(s->eq, ee.prov_errno, ee.err_data, NULL, 0));
		return -FI_ECONNREFUSED;
	}
	if (n == -FI_EAGAIN || n == -FI_ETIMEDOUT) {
		fprintf(stderr, "fi_stress: rank %d: peer rank %d did not %s within %d s\n",
			s->rank, 1 - s->rank, want == FI_CONNREQ ? "connect" : "accept",
			s->o.timeout_s);
		return -FI_ETIMEDOUT;
	}
	if (n < 0)
		return stress_fail(s, "fi_eq_sread", (int)n);
	if (event != want) {
		fprintf(stderr, "fi_stress: rank %d: unexpected CM event %u\n", s->rank, event);
		return -FI_EOTHER;
	}
	return 0;
}

/* MSG: rank 0 listens and accepts, rank 1 connects to the published name. */
static int stress_msg_setup(struct stress *s)
{
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	struct fi_eq_cm_entry ent;
	char name[STRESS_ADDR_MAX] = { 0 };
	size_t len = sizeof(name);
	int ret;

	s->addr = calloc(s->nranks, sizeof(*s->addr));
	if (!s->addr)
		return -FI_ENOMEM;
	ret = fi_eq_open(s->fabric, &eq_attr, &s->eq, NULL);
	if (ret)
		return stress_fail(s, "fi_eq_open", ret);
	if (s->rank == 0) {
		ret = fi_passive_ep(s->fabric, s->info, &s->pep, NULL);
		if (!ret)
			ret = fi_pep_bind(s->pep, &s->eq->fid, 0);
		if (!ret)
			ret = fi_listen(s->pep);
		if (!ret)
			ret = fi_getname(&s->pep->fid, name, &len);
		if (ret)
			return stress_fail(s, "listen", ret);
	}
	MPI_Bcast(&len, sizeof(len), MPI_BYTE, 0, MPI_COMM_WORLD);
	MPI_Bcast(name, STRESS_ADDR_MAX, MPI_BYTE, 0, MPI_COMM_WORLD);
	if (s->rank == 0) {
		ret = stress_eq_wait(s, FI_CONNREQ, &ent);
		if (ret)
			return ret;
		ret = stress_ep_open(s, ent.info);
		if (!ret)
			ret = fi_accept(s->ep, NULL, 0);
		fi_freeinfo(ent.info);
	} else {
		free(s->info->dest_addr);
		s->info->dest_addr = malloc(len);
		if (!s->info->dest_addr)
			return -FI_ENOMEM;
		memcpy(s->info->dest_addr, name, len);
		s->info->dest_addrlen = len;
		ret = stress_ep_open(s, s->info);
		if (!ret)
			ret = fi_connect(s->ep, name, NULL, 0);
	}
	if (ret)
		return ret < 0 ? stress_fail(s, "connection setup", ret) : -FI_EOTHER;
	return stress_eq_wait(s, FI_CONNECTED, &ent);
}

/*
 * Every rank learns where each peer's window is: its address as the peer
 * names it (virtual, or an offset without FI_MR_VIRT_ADDR) and its key.
 */
static int stress_win_exchange(struct stress *s)
{
	uint64_t mine[2], *all = calloc(2 * (size_t)s->nranks, sizeof(uint64_t));
	int i;

	if (!all)
		return -FI_ENOMEM;
	mine[0] = s->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR ?
		  (uint64_t)(uintptr_t)s->win : 0;
	mine[1] = fi_mr_key(s->win_mr);
	MPI_Allgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, MPI_COMM_WORLD);
	for (i = 0; i < s->nranks; i++) {
		s->peer[i].win_addr = all[2 * i];
		s->peer[i].win_key = all[2 * i + 1];
	}
	free(all);
	return 0;
}

int stress_setup(struct stress *s)
{
	struct fi_info *hints = stress_hints(&s->o);
	int ret;

	if (!hints)
		return -FI_ENOMEM;
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &s->info);
	fi_freeinfo(hints);
	if (ret) {
		char what[256];

		snprintf(what, sizeof(what), "fi_getinfo (%s %s endpoint with caps %s)",
			 s->o.prov, s->o.ep_type == FI_EP_MSG ? "msg" : "rdm",
			 fi_tostr(&(uint64_t){ stress_caps(&s->o) }, FI_TYPE_CAPS));
		return stress_fail(s, what, ret);
	}
	ret = fi_fabric(s->info->fabric_attr, &s->fabric, NULL);
	if (ret)
		return stress_fail(s, "fi_fabric", ret);
	ret = s->o.ep_type == FI_EP_MSG ? stress_msg_setup(s) : stress_rdm_setup(s);
	if (ret || !stress_uses_win(&s->o))
		return ret;
	return stress_win_exchange(s);
}

void stress_close(struct stress *s)
{
	int i;

	if (s->ep)
		fi_close(&s->ep->fid);
	if (s->pep)
		fi_close(&s->pep->fid);
	if (s->mr)
		fi_close(&s->mr->fid);
	if (s->win_mr)
		fi_close(&s->win_mr->fid);
	if (s->av)
		fi_close(&s->av->fid);
	if (s->cq)
		fi_close(&s->cq->fid);
	if (s->eq)
		fi_close(&s->eq->fid);
	if (s->domain)
		fi_close(&s->domain->fid);
	if (s->fabric)
		fi_close(&s->fabric->fid);
	if (s->info)
		fi_freeinfo(s->info);
	for (i = 0; s->peer && i < s->nranks; i++)
		free(s->peer[i].rx_post);
	free(s->peer);
	free(s->addr);
	free(s->rx);
	free(s->trx);
	free(s->tx);
	free(s->tx_free);
	free(s->slab);
	free(s->win);
	free(s->scratch);
}

/* SPDX-License-Identifier: MIT */
/*
 * fi_stress: no loss, duplication, reordering or corruption over libfabric.
 *
 *   mpirun -np N fi_stress -p PROVIDER [-e rdm|msg] [-m MSGS] [-M MAXSIZE]
 *                          [-s SEED] [-t TIMEOUT_S] [-w WINDOW] [-r RXBUFS]
 *
 * MPI only starts the ranks, exchanges endpoint addresses and synchronises;
 * run it with MPI on its own transport (pml ob1, btl self,vader,tcp) so that
 * every libfabric message counted is one of ours.  Rank r sends its share of
 * MSGS (total over all ranks) round-robin to the other ranks; each message is
 * a struct stress_hdr followed by a payload whose size and bytes are a pure
 * function of (seed, src, dst, k) (stress_msg.h).  Receivers check magic,
 * source, size, checksum, that every k from every source arrives exactly
 * once, and that messages from one source landed in receive buffers in the
 * order they were sent (FI_ORDER_SAS: buffers are matched in posting order;
 * completions may be reported out of order, e.g. rendezvous in ofi_rxm).
 *
 * -e msg (needed by plain "tcp", which has no RDM endpoint in 1.17) runs two
 * ranks over one connection: rank 0 listens, rank 1 connects.
 *
 * Every wait is bounded by TIMEOUT_S of no progress and then reports the
 * peer and step that stalled.  Rank 0 prints one JSON line; the exit status
 * is 0 only if every check on every rank passed.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_eq.h>

#include "stress_msg.h"

#define STRESS_ADDR_MAX 256
#define STRESS_SPIN_YIELD 256	/* empty polls before yielding the core */

struct stress_opts {
	const char *prov;
	enum fi_ep_type ep_type;
	uint64_t msgs;
	size_t max_size;
	uint64_t seed;
	int timeout_s;
	int window;
	int rxbufs;
};

/* One send or receive buffer; ctx first because of FI_CONTEXT(2) mode. */
struct stress_buf {
	struct fi_context2 ctx;
	bool is_rx;
	bool busy;
	int dst;		/* send buffers: rank the message went to */
	uint64_t post_no;	/* receive buffers: order in which posted */
	char *data;
};

struct stress_peer {
	uint64_t rx_expect;	/* messages this rank must get from the peer */
	uint64_t rx_got;
	uint64_t *rx_post;	/* post_no of the buffer holding seq k, 0 = none */
	uint64_t tx_total;	/* messages this rank sends to the peer */
	uint64_t tx_posted;
	uint64_t tx_done;
};

struct stress_errs {
	uint64_t magic, size, sum, dup, order, lost, extra, cq;
};

struct stress {
	struct stress_opts o;
	int rank, nranks;
	size_t buf_len;
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
	struct fid_pep *pep;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	struct fid_mr *mr;
	void *desc;
	char *slab;
	fi_addr_t *addr;
	struct stress_buf *rx, *tx;
	uint64_t next_post_no;
	struct stress_peer *peer;
	struct stress_errs err;
	uint64_t bytes;
	uint64_t tx_done, rx_got;	/* totals over all peers */
	double last_progress;
};

static double stress_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int stress_fail(struct stress *s, const char *what, int ret)
{
	fprintf(stderr, "fi_stress: rank %d: %s: %s (%d)\n", s->rank, what,
		fi_strerror(-ret), ret);
	return ret < 0 ? ret : -FI_EOTHER;
}

static int stress_rx_post(struct stress *s, struct stress_buf *b)
{
	int ret;

	do {
		ret = (int)fi_recv(s->ep, b->data, s->buf_len, s->desc,
				   FI_ADDR_UNSPEC, &b->ctx);
		if (ret == -FI_EAGAIN)
			(void)fi_cq_read(s->cq, NULL, 0);
	} while (ret == -FI_EAGAIN);
	if (ret)
		return stress_fail(s, "fi_recv", ret);
	b->post_no = ++s->next_post_no;
	return 0;
}

static void stress_rx_check(struct stress *s, struct stress_buf *b, size_t len)
{
	struct stress_hdr h;
	struct stress_peer *p;
	uint64_t key;

	memcpy(&h, b->data, sizeof(h));
	if (len < sizeof(h) || h.magic != STRESS_MAGIC || h.src >= (uint32_t)s->nranks ||
	    (int)h.src == s->rank) {
		s->err.magic++;
		return;
	}
	p = &s->peer[h.src];
	if (h.seq >= p->rx_expect) {
		s->err.extra++;
		return;
	}
	key = stress_key(s->o.seed, h.src, s->rank, h.seq);
	if (h.len != stress_size(key, s->o.max_size) || len != sizeof(h) + h.len)
		s->err.size++;
	else if (stress_sum(b->data + sizeof(h), h.len) != h.sum)
		s->err.sum++;
	if (p->rx_post[h.seq]) {
		s->err.dup++;
		return;
	}
	p->rx_post[h.seq] = b->post_no;
	p->rx_got++;
	s->rx_got++;
	s->bytes += len;
}

/* Reads completions; returns how many, or a negative error. */
static int stress_cq_poll(struct stress *s)
{
	struct fi_cq_msg_entry ent[16];
	struct fi_cq_err_entry ee = { 0 };
	struct stress_buf *b;
	ssize_t n;
	int i, ret;

	n = fi_cq_read(s->cq, ent, 16);
	if (n == -FI_EAGAIN)
		return 0;
	if (n == -FI_EAVAIL) {
		s->err.cq++;
		if (fi_cq_readerr(s->cq, &ee, 0) > 0) {
			b = ee.op_context;
			fprintf(stderr, "fi_stress: rank %d: %s completion error: %s "
				"(err %d, prov_errno %d: %s, len %zu)\n", s->rank,
				b ? (b->is_rx ? "receive" : "send") : "unknown",
				fi_strerror(ee.err), ee.err, ee.prov_errno,
				fi_cq_strerror(s->cq, ee.prov_errno, ee.err_data,
					       NULL, 0), ee.len);
		}
		return -FI_EIO;
	}
	if (n < 0)
		return stress_fail(s, "fi_cq_read", (int)n);
	for (i = 0; i < n; i++) {
		b = ent[i].op_context;
		if (!b->is_rx) {
			b->busy = false;
			s->peer[b->dst].tx_done++;
			s->tx_done++;
			continue;
		}
		stress_rx_check(s, b, ent[i].len);
		ret = stress_rx_post(s, b);
		if (ret)
			return ret;
	}
	s->last_progress = stress_now();
	return (int)n;
}

static void stress_report_stall(struct stress *s, const char *step)
{
	int i;

	fprintf(stderr, "fi_stress: rank %d: no progress for %d s in %s\n",
		s->rank, s->o.timeout_s, step);
	for (i = 0; i < s->nranks; i++) {
		struct stress_peer *p = &s->peer[i];

		if (i == s->rank)
			continue;
		if (p->rx_got < p->rx_expect)
			fprintf(stderr, "fi_stress: rank %d: from rank %d got %" PRIu64
				" of %" PRIu64 " messages\n", s->rank, i,
				p->rx_got, p->rx_expect);
		if (p->tx_done < p->tx_total)
			fprintf(stderr, "fi_stress: rank %d: to rank %d posted %" PRIu64
				", completed %" PRIu64 " of %" PRIu64 "\n", s->rank,
				i, p->tx_posted, p->tx_done, p->tx_total);
	}
}

/* Polls once; yields after many empty polls; fails on a stall. */
static int stress_progress(struct stress *s, const char *step, int *idle)
{
	int n = stress_cq_poll(s);

	if (n < 0)
		return n;
	if (n > 0) {
		*idle = 0;
		return 0;
	}
	if (++*idle % STRESS_SPIN_YIELD == 0)
		sched_yield();
	if (stress_now() - s->last_progress > s->o.timeout_s) {
		stress_report_stall(s, step);
		return -FI_ETIMEDOUT;
	}
	return 0;
}

static int stress_dst(const struct stress *s, int src, uint64_t j)
{
	return (int)((src + 1 + j % (uint64_t)(s->nranks - 1)) % (uint64_t)s->nranks);
}

static uint64_t stress_share(const struct stress *s, int r)
{
	return s->o.msgs / s->nranks + ((uint64_t)r < s->o.msgs % s->nranks);
}

static int stress_plan(struct stress *s)
{
	uint64_t k_src, off;
	int src;

	s->peer = calloc(s->nranks, sizeof(*s->peer));
	if (!s->peer)
		return -FI_ENOMEM;
	for (src = 0; src < s->nranks; src++) {
		struct stress_peer *p = &s->peer[src];

		if (src == s->rank)
			continue;
		k_src = stress_share(s, src);
		off = (uint64_t)((s->rank - src - 1 + s->nranks) % s->nranks);
		p->rx_expect = k_src / (s->nranks - 1) +
			       (k_src % (s->nranks - 1) > off);
		p->rx_post = calloc(p->rx_expect + 1, sizeof(uint64_t));
		if (!p->rx_post)
			return -FI_ENOMEM;
	}
	k_src = stress_share(s, s->rank);
	for (uint64_t j = 0; j < k_src; j++)
		s->peer[stress_dst(s, s->rank, j)].tx_total++;
	return 0;
}

static struct stress_buf *stress_tx_free(struct stress *s)
{
	int i;

	for (i = 0; i < s->o.window; i++)
		if (!s->tx[i].busy)
			return &s->tx[i];
	return NULL;
}

/* Builds message j in a free send buffer; NULL if the window is full. */
static struct stress_buf *stress_tx_stage(struct stress *s, uint64_t j, size_t *len)
{
	struct stress_buf *b = stress_tx_free(s);
	struct stress_hdr h;
	uint64_t key;
	int dst;

	if (!b)
		return NULL;
	dst = stress_dst(s, s->rank, j);
	key = stress_key(s->o.seed, s->rank, dst, s->peer[dst].tx_posted);
	h.magic = STRESS_MAGIC;
	h.src = s->rank;
	h.seq = s->peer[dst].tx_posted;
	h.len = stress_size(key, s->o.max_size);
	stress_fill(b->data + sizeof(h), h.len, key);
	h.sum = stress_sum(b->data + sizeof(h), h.len);
	memcpy(b->data, &h, sizeof(h));
	b->dst = dst;
	*len = sizeof(h) + h.len;
	return b;
}

/*
 * Sends this rank's share with at most WINDOW sends outstanding, retrying a
 * staged send on -FI_EAGAIN after progressing the CQ, until everything sent
 * has completed and everything expected has arrived.
 */
static int stress_run(struct stress *s)
{
	uint64_t j = 0, mine = stress_share(s, s->rank), rx_expect = 0;
	struct stress_buf *b = NULL;
	size_t len = 0;
	int idle = 0, i, ret;

	for (i = 0; i < s->nranks; i++)
		rx_expect += s->peer[i].rx_expect;
	s->last_progress = stress_now();
	while (j < mine || s->tx_done < mine || s->rx_got < rx_expect) {
		if (!b && j < mine)
			b = stress_tx_stage(s, j, &len);
		if (b) {
			ret = (int)fi_send(s->ep, b->data, len, s->desc,
					   s->addr[b->dst], &b->ctx);
			if (!ret) {
				b->busy = true;
				s->peer[b->dst].tx_posted++;
				b = NULL;
				j++;
				idle = 0;
				s->last_progress = stress_now();
				continue;
			}
			if (ret != -FI_EAGAIN)
				return stress_fail(s, "fi_send", ret);
		}
		ret = stress_progress(s, "data exchange", &idle);
		if (ret)
			return ret;
		if (s->err.magic + s->err.extra + s->err.dup)
			break;	/* counts can no longer add up; report now */
	}
	return 0;
}

/*
 * A barrier that keeps libfabric progressing: a peer's last send may still
 * need our acknowledgement (ofi_rxd, rendezvous in ofi_rxm), so blocking in
 * MPI_Barrier here could deadlock.  Late arrivals are counted as errors.
 */
static int stress_barrier(struct stress *s, const char *step)
{
	MPI_Request req;
	int flag = 0, idle = 0, ret;

	MPI_Ibarrier(MPI_COMM_WORLD, &req);
	s->last_progress = stress_now();
	while (!flag) {
		MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
		ret = stress_progress(s, step, &idle);
		if (ret)
			return ret;
	}
	return 0;
}

static struct fi_info *stress_hints(const struct stress_opts *o)
{
	struct fi_info *hints = fi_allocinfo();

	if (!hints)
		return NULL;
	hints->caps = FI_MSG;
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

/* Registers the buffer slab (if the provider needs it) and posts receives. */
static int stress_bufs_setup(struct stress *s)
{
	size_t n = (size_t)s->o.rxbufs + s->o.window, i;
	int ret;

	if (s->info->ep_attr->max_msg_size < s->buf_len) {
		fprintf(stderr, "fi_stress: rank %d: provider max_msg_size %zu < %zu\n",
			s->rank, s->info->ep_attr->max_msg_size, s->buf_len);
		return -FI_EMSGSIZE;
	}
	s->slab = malloc(n * s->buf_len);
	s->rx = calloc(s->o.rxbufs, sizeof(*s->rx));
	s->tx = calloc(s->o.window, sizeof(*s->tx));
	if (!s->slab || !s->rx || !s->tx)
		return -FI_ENOMEM;
	if (s->info->domain_attr->mr_mode & FI_MR_LOCAL) {
		ret = fi_mr_reg(s->domain, s->slab, n * s->buf_len,
				FI_SEND | FI_RECV, 0, 0, 0, &s->mr, NULL);
		if (ret)
			return stress_fail(s, "fi_mr_reg", ret);
		s->desc = fi_mr_desc(s->mr);
	}
	for (i = 0; i < (size_t)s->o.window; i++)
		s->tx[i].data = s->slab + i * s->buf_len;
	for (i = 0; i < (size_t)s->o.rxbufs; i++) {
		s->rx[i].is_rx = true;
		s->rx[i].data = s->slab + (s->o.window + i) * s->buf_len;
		ret = stress_rx_post(s, &s->rx[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static int stress_ep_open(struct stress *s, struct fi_info *info)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_MSG,
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

static int stress_setup(struct stress *s)
{
	struct fi_info *hints = stress_hints(&s->o);
	int ret;

	if (!hints)
		return -FI_ENOMEM;
	ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &s->info);
	fi_freeinfo(hints);
	if (ret)
		return stress_fail(s, "fi_getinfo", ret);
	ret = fi_fabric(s->info->fabric_attr, &s->fabric, NULL);
	if (ret)
		return stress_fail(s, "fi_fabric", ret);
	if (s->o.ep_type == FI_EP_MSG)
		return stress_msg_setup(s);
	return stress_rdm_setup(s);
}

static void stress_close(struct stress *s)
{
	int i;

	if (s->ep)
		fi_close(&s->ep->fid);
	if (s->pep)
		fi_close(&s->pep->fid);
	if (s->mr)
		fi_close(&s->mr->fid);
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
	free(s->tx);
	free(s->slab);
}

/* Counts lost messages and per-source order violations once all is in. */
static void stress_final_check(struct stress *s)
{
	uint64_t k;
	int i;

	for (i = 0; i < s->nranks; i++) {
		struct stress_peer *p = &s->peer[i];

		for (k = 0; k < p->rx_expect; k++) {
			if (!p->rx_post[k])
				s->err.lost++;
			else if (k && p->rx_post[k - 1] &&
				 p->rx_post[k] < p->rx_post[k - 1])
				s->err.order++;
		}
	}
}

static void stress_usage(void)
{
	fprintf(stderr, "usage: fi_stress -p PROVIDER [-e rdm|msg] [-m MSGS] [-M MAXSIZE]\n"
		"                 [-s SEED] [-t TIMEOUT_S] [-w WINDOW] [-r RXBUFS]\n");
}

static int stress_opts_parse(struct stress_opts *o, int argc, char **argv)
{
	int c;

	*o = (struct stress_opts){ .ep_type = FI_EP_RDM, .msgs = 100000,
				   .max_size = 1 << 20, .seed = 1, .timeout_s = 120,
				   .window = 8, .rxbufs = 16 };
	while ((c = getopt(argc, argv, "p:e:m:M:s:t:w:r:")) != -1) {
		switch (c) {
		case 'p': o->prov = optarg; break;
		case 'e':
			if (!strcmp(optarg, "msg"))
				o->ep_type = FI_EP_MSG;
			else if (strcmp(optarg, "rdm"))
				return -EINVAL;
			break;
		case 'm': o->msgs = strtoull(optarg, NULL, 0); break;
		case 'M': o->max_size = strtoull(optarg, NULL, 0); break;
		case 's': o->seed = strtoull(optarg, NULL, 0); break;
		case 't': o->timeout_s = atoi(optarg); break;
		case 'w': o->window = atoi(optarg); break;
		case 'r': o->rxbufs = atoi(optarg); break;
		default: return -EINVAL;
		}
	}
	if (!o->prov || !o->max_size || o->timeout_s <= 0 || o->window <= 0 ||
	    o->rxbufs <= 0)
		return -EINVAL;
	return 0;
}

int main(int argc, char **argv)
{
	struct stress s = { 0 };
	uint64_t errs[8], sum[8], bytes = 0;
	double t0, secs;
	int ret;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &s.nranks);
	if (stress_opts_parse(&s.o, argc, argv)) {
		if (!s.rank)
			stress_usage();
		MPI_Finalize();
		return 2;
	}
	if (s.nranks < 2 || (s.o.ep_type == FI_EP_MSG && s.nranks != 2)) {
		if (!s.rank)
			fprintf(stderr, "fi_stress: needs 2+ ranks (exactly 2 with -e msg)\n");
		MPI_Finalize();
		return 2;
	}
	s.buf_len = sizeof(struct stress_hdr) + s.o.max_size;
	ret = stress_plan(&s);
	if (!ret)
		ret = stress_setup(&s);
	if (!ret)
		ret = stress_barrier(&s, "start barrier");
	t0 = stress_now();
	if (!ret)
		ret = stress_run(&s);
	if (!ret)
		ret = stress_barrier(&s, "end barrier");
	secs = stress_now() - t0;
	if (ret) {
		fprintf(stderr, "fi_stress: rank %d failed: %s\n", s.rank, fi_strerror(-ret));
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	stress_final_check(&s);
	memcpy(errs, &s.err, sizeof(errs));
	MPI_Reduce(errs, sum, 8, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Reduce(&s.bytes, &bytes, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	ret = 0;
	for (int i = 0; i < 8; i++)
		ret |= errs[i] != 0;
	if (!s.rank) {
		uint64_t bad = 0;

		for (int i = 0; i < 8; i++)
			bad += sum[i];
		printf("{\"test\":\"fi_stress\",\"provider\":\"%s\",\"ep_type\":\"%s\","
		       "\"ranks\":%d,\"messages\":%" PRIu64 ",\"bytes\":%" PRIu64 ","
		       "\"seconds\":%.3f,\"errors\":{\"magic\":%" PRIu64 ",\"size\":%" PRIu64
		       ",\"checksum\":%" PRIu64 ",\"duplicate\":%" PRIu64 ",\"order\":%" PRIu64
		       ",\"lost\":%" PRIu64 ",\"extra\":%" PRIu64 ",\"cq\":%" PRIu64 "},"
		       "\"ok\":%s}\n", s.o.prov, s.o.ep_type == FI_EP_MSG ? "msg" : "rdm",
		       s.nranks, s.o.msgs, bytes, secs, sum[0], sum[1], sum[2], sum[3],
		       sum[4], sum[5], sum[6], sum[7], bad ? "false" : "true");
		fflush(stdout);
		ret = bad != 0;
	}
	/*
	 * A rank leaving the end barrier first must not close its endpoint
	 * while a peer still polls its CQ there: closing an MSG connection
	 * cancels the peer's posted receives (FI_ECANCELED completions).
	 */
	MPI_Barrier(MPI_COMM_WORLD);
	stress_close(&s);
	MPI_Finalize();
	return ret;
}

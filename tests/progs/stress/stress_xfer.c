/* SPDX-License-Identifier: MIT */
/*
 * fi_stress's message phase: every rank sends its share round-robin to the
 * other ranks, each message a struct stress_hdr and a payload that are a
 * pure function of (seed, src, dst, k) (stress_msg.h), and checks what it
 * receives.  Also the CQ, progress and the barrier both phases use.
 *
 * Message k to a peer is sent with the -o message operation k % n (send,
 * tsend, inject, tinject): a pure function, so the receiver knows which
 * queue it lands in.  An inject of a message larger than the provider's
 * inject_size is sent with fi_send (fi_tsend) instead; injects complete
 * nothing, so they count as done once posted.
 *
 * Tagged receives match a mark and ignore the bits below it, which carry
 * the source and k: any tagged buffer takes any tagged message, so order
 * holds as for untagged ones, and the completion's tag is checked.  Order
 * is checked within each queue: messages from one source landed in
 * buffers of their queue in the order they were sent (FI_ORDER_SAS:
 * buffers are matched in posting order; completions may be reported out
 * of order, e.g. rendezvous in ofi_rxm).
 */
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include "stress.h"
#include "stress_msg.h"

#define STRESS_TAG_MARK (0x5aULL << 40)
#define STRESS_TAG_IGNORE ((1ULL << 40) - 1)

static uint64_t stress_tag(uint32_t src, uint64_t k)
{
	return STRESS_TAG_MARK | (uint64_t)src << 32 | (k & 0xffffffffu);
}

static enum stress_op stress_msg_op(const struct stress *s, uint64_t k)
{
	return s->o.msg_ops[k % (uint64_t)s->o.n_msg_ops];
}

static bool stress_op_tagged(enum stress_op op)
{
	return STRESS_OP_BIT(op) & STRESS_TAGGED_OPS;
}

double stress_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int stress_fail(struct stress *s, const char *what, int ret)
{
	fprintf(stderr, "fi_stress: rank %d: %s: %s (%d)\n", s->rank, what,
		fi_strerror(-ret), ret);
	return ret < 0 ? ret : -FI_EOTHER;
}

struct stress_buf *stress_tx_get(struct stress *s)
{
	struct stress_buf *b = s->n_free ? s->tx_free[--s->n_free] : NULL;

	if (b)
		b->busy = true;
	return b;
}

void stress_tx_put(struct stress *s, struct stress_buf *b)
{
	b->busy = false;
	s->tx_free[s->n_free++] = b;
}

int stress_rx_post(struct stress *s, struct stress_buf *b)
{
	bool tagged = b->kind == STRESS_TRX;
	int ret;

	do {
		if (tagged)
			ret = (int)fi_trecv(s->ep, b->data, s->buf_len, s->desc,
					    FI_ADDR_UNSPEC, STRESS_TAG_MARK,
					    STRESS_TAG_IGNORE, &b->ctx);
		else
			ret = (int)fi_recv(s->ep, b->data, s->buf_len, s->desc,
					   FI_ADDR_UNSPEC, &b->ctx);
		if (ret == -FI_EAGAIN)
			(void)fi_cq_read(s->cq, NULL, 0);
	} while (ret == -FI_EAGAIN);
	if (ret)
		return stress_fail(s, tagged ? "fi_trecv" : "fi_recv", ret);
	b->post_no = ++s->next_post_no[tagged];
	return 0;
}

static void stress_rx_check(struct stress *s, struct stress_buf *b,
			    const struct fi_cq_tagged_entry *e)
{
	struct stress_hdr h;
	struct stress_peer *p;
	uint64_t key;
	bool tagged;

	memcpy(&h, b->data, sizeof(h));
	if (e->len < sizeof(h) || h.magic != STRESS_MAGIC || h.src >= (uint32_t)s->nranks ||
	    (int)h.src == s->rank) {
		s->err.magic++;
		return;
	}
	p = &s->peer[h.src];
	if (h.seq >= p->rx_expect) {
		s->err.extra++;
		return;
	}
	tagged = stress_op_tagged(stress_msg_op(s, h.seq));
	if (tagged != (b->kind == STRESS_TRX) ||
	    (tagged && e->tag != stress_tag(h.src, h.seq)))
		s->err.tag++;
	key = stress_key(s->o.seed, h.src, s->rank, h.seq);
	if (h.len != stress_size(key, s->o.max_size) || e->len != sizeof(h) + h.len)
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
	s->bytes += e->len;
}

static const char *stress_buf_name(const struct stress_buf *b)
{
	if (!b)
		return "unknown";
	if (b->kind == STRESS_RX)
		return "receive";
	if (b->kind == STRESS_TRX)
		return "tagged receive";
	return stress_op_names[b->op];
}

/* Reads completions; returns how many, or a negative error. */
static int stress_cq_poll(struct stress *s)
{
	struct fi_cq_tagged_entry ent[16];
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
				stress_buf_name(b), fi_strerror(ee.err), ee.err,
				ee.prov_errno, fi_cq_strerror(s->cq, ee.prov_errno,
							      ee.err_data, NULL, 0),
				ee.len);
		}
		return -FI_EIO;
	}
	if (n < 0)
		return stress_fail(s, "fi_cq_read", (int)n);
	for (i = 0; i < n; i++) {
		b = ent[i].op_context;
		if (b->kind == STRESS_TX) {
			if (STRESS_OP_BIT(b->op) & STRESS_MSG_OPS) {
				s->peer[b->peer].tx_done++;
				s->tx_done++;
			} else {
				stress_rma_complete(s, b);
			}
			stress_tx_put(s, b);
			continue;
		}
		stress_rx_check(s, b, &ent[i]);
		ret = stress_rx_post(s, b);
		if (ret)
			return ret;
	}
	s->last_progress = stress_now();
	return (int)n;
}

/* Operations a stall report names at most. */
#define STRESS_STALL_OPS 8

static void stress_report_stall(struct stress *s, const char *step)
{
	int i, n;

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
				", completed %" PRIu64 " of %" PRIu64 " messages\n",
				s->rank, i, p->tx_posted, p->tx_done, p->tx_total);
	}
	if (s->rma_done < s->rma_posted)
		fprintf(stderr, "fi_stress: rank %d: %" PRIu64 " of %" PRIu64
			" RMA and atomic operations completed\n", s->rank,
			s->rma_done, s->rma_posted);
	for (i = 0, n = 0; i < s->o.window && n < STRESS_STALL_OPS; i++) {
		struct stress_buf *b = &s->tx[i];

		if (!b->busy)
			continue;
		fprintf(stderr, "fi_stress: rank %d: %s %" PRIu64 " to rank %d not "
			"completed\n", s->rank, stress_op_names[b->op], b->k, b->peer);
		n++;
	}
}

int stress_progress(struct stress *s, const char *step, int *idle)
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

int stress_plan(struct stress *s)
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

/* The message phase: this rank's share and what it expects back. */
struct stress_msgs {
	struct stress_phase ph;
	uint64_t mine;		/* messages this rank sends */
	uint64_t rx_expect;	/* and receives */
};

/* Builds message j in a free send buffer; NULL when none is free or all are built. */
static struct stress_buf *stress_msg_stage(struct stress *s, const struct stress_phase *ph,
					   uint64_t j, size_t *len)
{
	const struct stress_msgs *m = (const struct stress_msgs *)ph;
	struct stress_buf *b;
	struct stress_hdr h;
	uint64_t key;
	int dst;

	if (j == m->mine || !(b = stress_tx_get(s)))
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
	b->peer = dst;
	b->k = h.seq;
	*len = sizeof(h) + h.len;
	return b;
}

static int stress_msg_post_op(struct stress *s, struct stress_buf *b, size_t len)
{
	fi_addr_t to = s->addr[b->peer];
	uint64_t tag = stress_tag(s->rank, b->k);

	switch (b->op) {
	case STRESS_OP_SEND:
		return (int)fi_send(s->ep, b->data, len, s->desc, to, &b->ctx);
	case STRESS_OP_TSEND:
		return (int)fi_tsend(s->ep, b->data, len, s->desc, to, tag, &b->ctx);
	case STRESS_OP_INJECT:
		return (int)fi_inject(s->ep, b->data, len, to);
	default:
		return (int)fi_tinject(s->ep, b->data, len, to, tag);
	}
}

/* Posts a staged message with its operation; an inject is done once posted. */
static int stress_msg_post(struct stress *s, struct stress_buf *b, size_t len)
{
	struct stress_peer *p = &s->peer[b->peer];
	bool fits = len <= s->info->tx_attr->inject_size;
	int ret;

	b->op = stress_msg_op(s, b->k);
	if (b->op == STRESS_OP_INJECT && !fits)
		b->op = STRESS_OP_SEND;
	else if (b->op == STRESS_OP_TINJECT && !fits)
		b->op = STRESS_OP_TSEND;
	ret = stress_msg_post_op(s, b, len);
	if (ret)
		return ret;
	p->tx_posted++;
	if (b->op == STRESS_OP_INJECT || b->op == STRESS_OP_TINJECT) {
		p->tx_done++;
		s->tx_done++;
		stress_tx_put(s, b);
	}
	return 0;
}

static bool stress_msgs_done(const struct stress *s, const struct stress_phase *ph,
			     uint64_t posted)
{
	const struct stress_msgs *m = (const struct stress_msgs *)ph;

	if (s->err.magic + s->err.extra + s->err.dup)
		return true;	/* counts can no longer add up; report now */
	return posted == m->mine && s->tx_done == m->mine && s->rx_got == m->rx_expect;
}

int stress_issue(struct stress *s, const struct stress_phase *ph)
{
	struct stress_buf *b = NULL;
	uint64_t posted = 0;
	size_t len = 0;
	int idle = 0, ret;

	s->last_progress = stress_now();
	while (!ph->done(s, ph, posted)) {
		if (!b)
			b = ph->stage(s, ph, posted, &len);
		if (b) {
			ret = ph->post(s, b, len);
			if (!ret) {
				s->peer[b->peer].ops++;
				s->peer[b->peer].bytes += len;
				s->op_count[b->op]++;
				b = NULL;
				posted++;
				idle = 0;
				s->last_progress = stress_now();
				continue;
			}
			if (ret != -FI_EAGAIN)
				return stress_fail(s, stress_op_names[b->op], ret);
			s->refused++;
		}
		ret = stress_progress(s, ph->step, &idle);
		if (ret)
			return ret;
	}
	return 0;
}

int stress_run(struct stress *s)
{
	struct stress_msgs m = {
		.ph = { .step = "data exchange", .stage = stress_msg_stage,
			.post = stress_msg_post, .done = stress_msgs_done },
		.mine = stress_share(s, s->rank),
	};
	int i;

	for (i = 0; i < s->nranks; i++)
		m.rx_expect += s->peer[i].rx_expect;
	return stress_issue(s, &m.ph);
}

/*
 * A barrier that keeps libfabric progressing: a peer's last send may still
 * need our acknowledgement (ofi_rxd, rendezvous in ofi_rxm), or our
 * window's writes our progress, so blocking in MPI_Barrier here could
 * deadlock.  Late arrivals are counted as errors.
 */
int stress_barrier(struct stress *s, const char *step)
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

void stress_final_check(struct stress *s)
{
	uint64_t k, last[2];
	bool tagged;
	int i;

	for (i = 0; i < s->nranks; i++) {
		struct stress_peer *p = &s->peer[i];

		last[0] = last[1] = 0;
		for (k = 0; k < p->rx_expect; k++) {
			if (!p->rx_post[k]) {
				s->err.lost++;
				continue;
			}
			tagged = stress_op_tagged(stress_msg_op(s, k));
			if (p->rx_post[k] < last[tagged])
				s->err.order++;
			last[tagged] = p->rx_post[k];
		}
	}
}

/* SPDX-License-Identifier: MIT */
/*
 * fi_stress's RMA and atomic phase.
 *
 * Every rank's window holds a counter and, for each rank, a region of
 * CHUNKS slots.  Each rank writes its k-th chunk (stress_chunk(): random
 * length and offset within slot k, patterned bytes) into its region of
 * every peer's window with fi_write, and adds its k-th amount to every
 * peer's counter with fi_atomic(FI_SUM, FI_UINT64): CHUNKS of each per
 * peer, interleaved, at most WINDOW outstanding.
 *
 * A write's or atomic's completion need not mean the target's memory holds
 * it yet (beneath the shim it is reported once the data has left the
 * port, ΔL before it reaches the provider), so each rank then watches its
 * own window, progressing, until every slot holds what its writer wrote and
 * the counter the sum of what every peer added; a stall of TIMEOUT_S names
 * the writer and slot, or the counter, that never arrived.  After a barrier
 * that keeps progressing, each rank fi_reads back every STRESS_READ_EVERY-th
 * slot it wrote at each peer, the bytes around the chunk included, and
 * checks them.  Once every rank is done (stress_rma_check, after the end
 * barrier) each checks its window once more, so that a write or atomic
 * applied twice, or late, is caught too.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fi_atomic.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "stress.h"
#include "stress_msg.h"

#define STRESS_SLOT 4096	/* bytes of a chunk's slot, at most buf_len */
#define STRESS_WIN_HDR 64	/* the counter, alone in its cache line */
#define STRESS_READ_EVERY 4

/* Slots are read whole into a send-type buffer, so no larger than one. */
static size_t stress_slot(const struct stress *s)
{
	size_t slot = s->buf_len < STRESS_SLOT ? s->buf_len : STRESS_SLOT;

	return slot & ~(size_t)7;
}

size_t stress_win_len(const struct stress *s)
{
	return STRESS_WIN_HDR + (size_t)s->nranks * s->o.chunks * stress_slot(s);
}

/* Offset in any window of slot k of src's region. */
static size_t stress_slot_off(const struct stress *s, int src, uint64_t k)
{
	return STRESS_WIN_HDR + ((size_t)src * s->o.chunks + k) * stress_slot(s);
}

static bool stress_has(const struct stress *s, enum stress_op op)
{
	return s->o.ops & STRESS_OP_BIT(op);
}

/* What slot k of src's region in dst's window holds once src has written. */
static void stress_slot_expect(const struct stress *s, int src, int dst,
			       uint64_t k, char *out)
{
	size_t slot = stress_slot(s);
	struct stress_chunk c;

	memset(out, 0, slot);
	if (!stress_has(s, STRESS_OP_WRITE))
		return;
	c = stress_chunk(s->o.seed, src, dst, k, slot);
	stress_fill(out + c.off, c.len, c.key);
}

/*
 * The first byte at which have, slot k of src's region in dst's window,
 * differs from what src wrote, or -1.  A window's bytes may change while
 * they are compared, as a write lands.
 */
static long stress_slot_diff(struct stress *s, const char *have, int src,
			     int dst, uint64_t k)
{
	size_t i, slot = stress_slot(s);

	stress_slot_expect(s, src, dst, k, s->scratch);
	if (!memcmp(have, s->scratch, slot))
		return -1;
	for (i = 0; i < slot && have[i] == s->scratch[i]; i++)
		;
	return i < slot ? (long)i : -1;
}

static uint64_t stress_counter(const struct stress *s)
{
	return __atomic_load_n((uint64_t *)(void *)s->win, __ATOMIC_ACQUIRE);
}

/* The sum every peer adds to this rank's counter. */
static uint64_t stress_counter_expect(const struct stress *s)
{
	uint64_t sum = 0, k;
	int src;

	if (!stress_has(s, STRESS_OP_ATOMIC))
		return 0;
	for (src = 0; src < s->nranks; src++)
		for (k = 0; src != s->rank && k < (uint64_t)s->o.chunks; k++)
			sum += stress_chunk(s->o.seed, src, s->rank, k,
					    stress_slot(s)).addend;
	return sum;
}

/* The order of a phase's operations: ops[] to each peer in turn, for each k. */
struct stress_rma_order {
	struct stress_phase ph;
	enum stress_op ops[2];
	int nops;
	uint64_t k_step;
	uint64_t n;		/* operations in all */
};

/*
 * Fills a free buffer for operation i: a write's chunk, an atomic's amount,
 * or, for a read of the whole slot, poison, so that bytes a read never
 * delivered are seen.
 */
static struct stress_buf *stress_rma_stage(struct stress *s, const struct stress_phase *ph,
					   uint64_t i, size_t *len)
{
	const struct stress_rma_order *ord = (const struct stress_rma_order *)ph;
	uint64_t peers = (uint64_t)s->nranks - 1, rest;
	struct stress_chunk c;
	struct stress_buf *b;

	if (i == ord->n || !(b = stress_tx_get(s)))
		return NULL;
	rest = i / (uint64_t)ord->nops;
	b->op = ord->ops[i % (uint64_t)ord->nops];
	b->peer = (int)((s->rank + 1 + rest % peers) % (uint64_t)s->nranks);
	b->k = rest / peers * ord->k_step;
	c = stress_chunk(s->o.seed, s->rank, b->peer, b->k, stress_slot(s));
	switch (b->op) {
	case STRESS_OP_WRITE:
		*len = c.len;
		stress_fill(b->data, c.len, c.key);
		break;
	case STRESS_OP_READ:
		*len = stress_slot(s);
		memset(b->data, 0xa5, *len);
		break;
	default:
		*len = sizeof(c.addend);
		memcpy(b->data, &c.addend, sizeof(c.addend));
		break;
	}
	return b;
}

static int stress_rma_post(struct stress *s, struct stress_buf *b, size_t len)
{
	struct stress_peer *p = &s->peer[b->peer];
	uint64_t at = p->win_addr + stress_slot_off(s, s->rank, b->k);
	fi_addr_t to = s->addr[b->peer];
	int ret;

	switch (b->op) {
	case STRESS_OP_WRITE:
		at += stress_chunk(s->o.seed, s->rank, b->peer, b->k, stress_slot(s)).off;
		ret = (int)fi_write(s->ep, b->data, len, s->desc, to, at, p->win_key,
				    &b->ctx);
		break;
	case STRESS_OP_READ:
		ret = (int)fi_read(s->ep, b->data, len, s->desc, to, at, p->win_key,
				   &b->ctx);
		break;
	default:
		ret = (int)fi_atomic(s->ep, b->data, 1, s->desc, to, p->win_addr,
				     p->win_key, FI_UINT64, FI_SUM, &b->ctx);
		break;
	}
	if (!ret)
		s->rma_posted++;
	return ret;
}

static bool stress_rma_done(const struct stress *s, const struct stress_phase *ph,
			    uint64_t posted)
{
	return posted == ((const struct stress_rma_order *)ph)->n &&
	       s->rma_done == s->rma_posted;
}

void stress_rma_complete(struct stress *s, struct stress_buf *b)
{
	long at;

	s->rma_done++;
	if (b->op != STRESS_OP_READ)
		return;
	at = stress_slot_diff(s, b->data, s->rank, b->peer, b->k);
	if (at < 0)
		return;
	if (!s->err.read)
		fprintf(stderr, "fi_stress: rank %d: slot %" PRIu64 " read back from "
			"rank %d differs at byte %ld\n", s->rank, b->k, b->peer, at);
	s->err.read++;
}

/* The first byte at which slot k from src in this rank's window differs, or -1. */
static long stress_win_diff(struct stress *s, int src, uint64_t k)
{
	return stress_slot_diff(s, s->win + stress_slot_off(s, src, k), src,
				s->rank, k);
}

/* Names what the window still lacks: the first slot not yet right, the counter. */
static void stress_settle_stall(struct stress *s, int src, uint64_t k)
{
	uint64_t have = stress_counter(s), want = stress_counter_expect(s);

	if (src < s->nranks)
		fprintf(stderr, "fi_stress: rank %d: slot %" PRIu64 " written by rank %d "
			"differs at byte %ld (slots of later ranks not checked)\n",
			s->rank, k, src, stress_win_diff(s, src, k));
	if (have != want)
		fprintf(stderr, "fi_stress: rank %d: counter %" PRIu64 ", expected %"
			PRIu64 "\n", s->rank, have, want);
}

/* Progresses until this rank's window holds everything every peer sent. */
static int stress_rma_settle(struct stress *s)
{
	uint64_t want = stress_counter_expect(s), seen = stress_counter(s), k = 0;
	int idle = 0, src = 0, ret;

	s->last_progress = stress_now();
	while (src < s->nranks || seen != want) {
		if (src < s->nranks && (src == s->rank || stress_win_diff(s, src, k) < 0)) {
			if (src == s->rank || ++k == (uint64_t)s->o.chunks) {
				src++;
				k = 0;
			}
			s->last_progress = stress_now();
			continue;
		}
		if (stress_counter(s) != seen) {
			seen = stress_counter(s);
			s->last_progress = stress_now();
		}
		ret = stress_progress(s, "window settle", &idle);
		if (ret) {
			stress_settle_stall(s, src, k);
			return ret;
		}
	}
	return 0;
}

#define STRESS_RMA_PHASE(name) { .step = (name), .stage = stress_rma_stage, \
				 .post = stress_rma_post, .done = stress_rma_done }

int stress_rma_run(struct stress *s)
{
	struct stress_rma_order put = {
		.ph = STRESS_RMA_PHASE("writes and atomics"), .k_step = 1,
	}, get = {
		.ph = STRESS_RMA_PHASE("reads"), .ops = { STRESS_OP_READ }, .nops = 1,
		.k_step = STRESS_READ_EVERY,
	};
	uint64_t peers = (uint64_t)s->nranks - 1, chunks = (uint64_t)s->o.chunks;
	int ret;

	if (!s->win)
		return 0;
	s->scratch = malloc(stress_slot(s));
	if (!s->scratch)
		return -FI_ENOMEM;
	if (stress_has(s, STRESS_OP_WRITE))
		put.ops[put.nops++] = STRESS_OP_WRITE;
	if (stress_has(s, STRESS_OP_ATOMIC))
		put.ops[put.nops++] = STRESS_OP_ATOMIC;
	put.n = chunks * peers * (uint64_t)put.nops;
	get.n = stress_has(s, STRESS_OP_READ) ?
		(chunks + STRESS_READ_EVERY - 1) / STRESS_READ_EVERY * peers : 0;
	ret = stress_issue(s, &put.ph);
	if (!ret)
		ret = stress_rma_settle(s);
	if (!ret)
		ret = stress_barrier(s, "window barrier");
	if (!ret)
		ret = stress_issue(s, &get.ph);
	return ret;
}

void stress_rma_check(struct stress *s)
{
	uint64_t k;
	int src;

	if (!s->win)
		return;
	for (src = 0; src < s->nranks; src++)
		for (k = 0; src != s->rank && k < (uint64_t)s->o.chunks; k++)
			if (stress_win_diff(s, src, k) >= 0)
				s->err.window++;
	if (stress_counter(s) != stress_counter_expect(s))
		s->err.counter++;
}

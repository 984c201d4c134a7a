/* SPDX-License-Identifier: MIT */
/*
 * Completions that must not be lost while the program waits elsewhere:
 *   - RMA writes with remote events: b's buffer registered with
 *     FI_RMA_EVENT and bound to a remote-write counter, a writes with
 *     remote CQ data, and b blocks in fi_cntr_wait until every write has
 *     landed while a polls its send counter (fabtests' fi_rdm_rma_event);
 *     then b reads the CQ data.  The process is held to one CPU, as a
 *     rank is on a machine with a rank on every core: the shim's progress
 *     thread, which only runs where a core is free, then cannot post the
 *     writes, and a's counter reads must.
 *   - A 1 MiB message an endpoint sends to itself (an MPI rank's
 *     Isend/Irecv to itself): the receive posted before or after the
 *     send, both completions reaped by polling, as MPI_Waitall does.
 * Each runs several rounds in one process: the hangs seen were 1 in 7.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "conform.h"

#define CF_EV_ROUNDS	24
#define CF_EV_WRITES	8
#define CF_EV_LEN	256
_Static_assert(CF_EV_WRITES * CF_EV_LEN <= CF_BUF_LEN, "writes fit b.buf");
/* How long b's counter wait may block in all. */
#define CF_EV_WAIT_MS	5000

/* b's registration with remote events, bound to b's remote counter. */
struct cf_ev {
	struct cf_pair p;
	struct fid_mr *mr;
	uint64_t key;
	/* b's fi_cntr_wait, on a thread so that a hang fails the case */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t want;
	bool done;
	int ret;
};

static int cf_ev_open(struct cf_ev *ev, const char *prov,
		      enum fi_ep_type type)
{
	const struct cf_pair_attr attr = { .type = type,
					   .caps = FI_RMA | FI_RMA_EVENT,
					   .cntrs = true, .rma_cntr = true };
	struct cf_pair *p = &ev->p;
	int ret;

	memset(ev, 0, sizeof(*ev));
	if ((ret = cf_pair_open(p, prov, &attr)))
		return ret;
	if (!p->info->domain_attr->cq_data_size)
		return cf_skip("%s: the domain's cq_data_size is 0", prov);
	ret = fi_mr_reg(p->domain, p->b.buf, sizeof(p->b.buf),
			FI_REMOTE_WRITE | FI_REMOTE_READ, 0, 3, FI_RMA_EVENT,
			&ev->mr, NULL);
	if (ret == -FI_ENOSYS || ret == -FI_EOPNOTSUPP)
		return cf_skip("%s: fi_mr_reg with FI_RMA_EVENT: %s", prov,
			       fi_strerror(-ret));
	CF_OK(ret);
	/* Where an MR takes no counter, b's endpoint's counts its writes. */
	ret = fi_mr_bind(ev->mr, &p->b.rma_cntr->fid, FI_REMOTE_WRITE);
	if (ret != -FI_ENOSYS) {
		CF_OK(ret);
		CF_OK(fi_mr_enable(ev->mr));
	}
	ev->key = fi_mr_key(ev->mr);
	pthread_mutex_init(&ev->lock, NULL);
	pthread_cond_init(&ev->cond, NULL);
	return 0;
}

static void *cf_ev_waiter(void *arg)
{
	struct cf_ev *ev = arg;
	int ret = fi_cntr_wait(ev->p.b.rma_cntr, ev->want, CF_EV_WAIT_MS);

	pthread_mutex_lock(&ev->lock);
	ev->ret = ret;
	ev->done = true;
	pthread_cond_signal(&ev->cond);
	pthread_mutex_unlock(&ev->lock);
	return NULL;
}

/*
 * b blocks in fi_cntr_wait for want while a polls its own send counter
 * for its writes, as fabtests' fi_rdm_rma_event does: on two cores both
 * are busy, and only a's counter reads are left to release its writes.
 * Bounded by CF_EV_WAIT_MS + 2 s.
 */
static int cf_ev_wait(struct cf_ev *ev, uint64_t want, int round)
{
	uint64_t deadline = cf_now_ns() + (CF_EV_WAIT_MS + 2000) * 1000000ULL;
	struct cf_pair *p = &ev->p;
	pthread_t thread;
	bool done = false;
	int ret;

	ev->want = want;
	ev->done = false;
	ret = pthread_create(&thread, NULL, cf_ev_waiter, ev);
	CF_CHECK(!ret, "pthread_create: %s", strerror(ret));
	while (fi_cntr_read(p->a.tx_cntr) < want && cf_now_ns() < deadline)
		CF_CHECK(!fi_cntr_readerr(p->a.tx_cntr), "round %d: a.tx_cntr "
			 "error count %llu", round,
			 (unsigned long long) fi_cntr_readerr(p->a.tx_cntr));
	CF_CHECK(fi_cntr_read(p->a.tx_cntr) >= want, "round %d: a.tx_cntr at "
		 "%llu, not %llu, after %d ms", round,
		 (unsigned long long) fi_cntr_read(p->a.tx_cntr),
		 (unsigned long long) want, CF_EV_WAIT_MS + 2000);
	while (!done && cf_now_ns() < deadline) {
		pthread_mutex_lock(&ev->lock);
		done = ev->done;
		pthread_mutex_unlock(&ev->lock);
		sched_yield();
	}
	CF_CHECK(done, "round %d: fi_cntr_wait(b's remote counter, %llu, %d ms) "
		 "did not return (counter at %llu)", round,
		 (unsigned long long) want, CF_EV_WAIT_MS,
		 (unsigned long long) fi_cntr_read(ev->p.b.rma_cntr));
	pthread_join(thread, NULL);
	CF_CHECK(!ev->ret, "round %d: fi_cntr_wait(b's remote counter, %llu, "
		 "%d ms): %s (counter at %llu)", round,
		 (unsigned long long) want, CF_EV_WAIT_MS, fi_strerror(-ev->ret),
		 (unsigned long long) fi_cntr_read(ev->p.b.rma_cntr));
	return 0;
}

static int cf_ev_round(struct cf_ev *ev, int round)
{
	struct cf_pair *p = &ev->p;
	struct fi_context2 ctx[CF_EV_WRITES];
	struct fi_cq_data_entry e;
	uint64_t raddr = p->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR ?
			 (uint64_t) (uintptr_t) p->b.buf : 0;
	unsigned seed = 100 + (unsigned) round * CF_EV_WRITES;
	bool seen[CF_EV_WRITES] = { false };
	size_t off;
	int i, ret;

	memset(p->b.buf, 0, CF_EV_WRITES * CF_EV_LEN);
	for (i = 0; i < CF_EV_WRITES; i++) {
		off = (size_t) i * CF_EV_LEN;
		cf_fill(p->a.buf + off, CF_EV_LEN, seed + (unsigned) i);
		CF_POST(p, fi_writedata(p->a.ep, p->a.buf + off, CF_EV_LEN,
					p->a.desc, (uint64_t) i, p->a.peer,
					raddr + off, ev->key, &ctx[i]));
	}
	/* The program waits on counters alone. */
	if ((ret = cf_ev_wait(ev, (uint64_t) (round + 1) * CF_EV_WRITES,
			      round)))
		return ret;
	for (i = 0; i < CF_EV_WRITES; i++) {
		if ((ret = cf_cq_wait(p, p->b.cq, &e, "remote CQ data")))
			return ret;
		CF_CHECK((e.flags & FI_REMOTE_CQ_DATA) && e.data < CF_EV_WRITES &&
			 !seen[e.data], "round %d: target completion flags "
			 "0x%llx data %llu", round, (unsigned long long) e.flags,
			 (unsigned long long) e.data);
		seen[e.data] = true;
	}
	for (i = 0; i < CF_EV_WRITES; i++)
		if ((ret = cf_cq_wait(p, p->a.cq, &e, "write completion")))
			return ret;
	for (i = 0; i < CF_EV_WRITES; i++)
		CF_CHECK(cf_check(p->b.buf + (size_t) i * CF_EV_LEN, CF_EV_LEN,
				  seed + (unsigned) i),
			 "round %d: write %d left other bytes", round, i);
	return 0;
}

static int cf_rma_event(const char *prov, enum fi_ep_type type)
{
	int i, ret, cpu = sched_getcpu();
	struct cf_ev ev;
	cpu_set_t one;

	/* Before the domain: the shim's thread starts with it and inherits. */
	CPU_ZERO(&one);
	CPU_SET(cpu < 0 ? 0 : cpu, &one);
	CF_CHECK(!sched_setaffinity(0, sizeof(one), &one),
		 "sched_setaffinity to CPU %d failed", cpu);
	if ((ret = cf_ev_open(&ev, prov, type)))
		return ret;
	for (i = 0; i < CF_EV_ROUNDS; i++)
		if ((ret = cf_ev_round(&ev, i)))
			return ret;
	pthread_cond_destroy(&ev.cond);
	pthread_mutex_destroy(&ev.lock);
	CF_OK(fi_close(&ev.mr->fid));
	return cf_pair_close(&ev.p);
}

/* ---- a 1 MiB message to oneself -------------------------------------- */

#define CF_SELF_LEN	(1024 * 1024)
#define CF_SELF_ROUNDS	8

static int cf_self_round(struct cf_pair *p, char *sbuf, char *rbuf,
			 void *sdesc, void *rdesc, fi_addr_t self, int round)
{
	struct fi_context2 sctx, rctx;
	struct fi_cq_data_entry e;
	bool sent = false, got = false;
	uint64_t deadline;
	ssize_t n;

	memset(rbuf, 0, CF_SELF_LEN);
	cf_fill(sbuf, CF_SELF_LEN, 60 + (unsigned) round);
	/* MPI posts its receive before or after the send: both, in turn. */
	if (round % 2)
		CF_POST(p, fi_send(p->a.ep, sbuf, CF_SELF_LEN, sdesc, self,
				   &sctx));
	CF_POST(p, fi_recv(p->a.ep, rbuf, CF_SELF_LEN, rdesc, self, &rctx));
	if (!(round % 2))
		CF_POST(p, fi_send(p->a.ep, sbuf, CF_SELF_LEN, sdesc, self,
				   &sctx));
	deadline = cf_now_ns() + CF_WAIT_NS;
	while (!sent || !got) {
		n = fi_cq_read(p->a.cq, &e, 1);
		if (n == 1) {
			CF_CHECK(e.op_context == &sctx || e.op_context == &rctx,
				 "round %d: completion of context %p", round,
				 e.op_context);
			if (e.op_context == &sctx)
				sent = true;
			else
				got = e.len == CF_SELF_LEN;
			CF_CHECK(e.op_context == &sctx || got, "round %d: "
				 "received %zu bytes", round, e.len);
			continue;
		}
		CF_CHECK(n == -FI_EAGAIN, "round %d: fi_cq_read: %s", round,
			 fi_strerror((int) -n));
		CF_CHECK(cf_now_ns() < deadline, "round %d: the %s completion "
			 "did not come within %llu s", round,
			 !sent && !got ? "send and receive" :
			 !sent ? "send" : "receive", CF_WAIT_NS / 1000000000ULL);
	}
	CF_CHECK(cf_check(rbuf, CF_SELF_LEN, 60 + (unsigned) round),
		 "round %d: received bytes differ", round);
	return 0;
}

static int cf_msg_self_1m(const char *prov, enum fi_ep_type type)
{
	const struct cf_pair_attr attr = { .type = type };
	struct fid_mr *smr = NULL, *rmr = NULL;
	void *sdesc = NULL, *rdesc = NULL;
	char *sbuf, *rbuf;
	struct cf_pair p;
	fi_addr_t self;
	int i, ret;

	if (type == FI_EP_MSG)
		return cf_skip("a MSG endpoint cannot send to itself");
	if ((ret = cf_pair_open(&p, prov, &attr)))
		return ret;
	if (p.info->ep_attr->max_msg_size < CF_SELF_LEN)
		return cf_skip("%s: max_msg_size %zu", prov,
			       p.info->ep_attr->max_msg_size);
	CF_CHECK(fi_av_insert(p.a.av, p.a.addr, 1, &self, 0, NULL) == 1,
		 "fi_av_insert of a's own address failed");
	sbuf = malloc(CF_SELF_LEN);
	rbuf = malloc(CF_SELF_LEN);
	CF_CHECK(sbuf && rbuf, "malloc of 2 x %d bytes", CF_SELF_LEN);
	if (p.info->domain_attr->mr_mode & FI_MR_LOCAL) {
		CF_OK(fi_mr_reg(p.domain, sbuf, CF_SELF_LEN, FI_SEND, 0, 4, 0,
				&smr, NULL));
		CF_OK(fi_mr_reg(p.domain, rbuf, CF_SELF_LEN, FI_RECV, 0, 5, 0,
				&rmr, NULL));
		sdesc = fi_mr_desc(smr);
		rdesc = fi_mr_desc(rmr);
	}
	for (i = 0; i < CF_SELF_ROUNDS; i++)
		if ((ret = cf_self_round(&p, sbuf, rbuf, sdesc, rdesc, self, i)))
			return ret;
	if (smr) {
		CF_OK(fi_close(&smr->fid));
		CF_OK(fi_close(&rmr->fid));
	}
	free(sbuf);
	free(rbuf);
	return cf_pair_close(&p);
}

CF_EP_TYPES(rma_event)
CF_EP_TYPES(msg_self_1m)

const struct cf_case cf_event_cases[] = {
	CF_EP_TYPE_CASES(rma_event),
	CF_EP_TYPE_CASES(msg_self_1m),
	{ NULL, NULL },
};

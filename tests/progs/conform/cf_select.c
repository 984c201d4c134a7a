/* SPDX-License-Identifier: MIT */
/*
 * Selective completion with a poll set: both sides' CQs bound with
 * FI_SELECTIVE_COMPLETION, send and receive counters bound too, CQs and
 * counters in one poll set; a sends without FI_COMPLETION, b receives with
 * it.  a's CQ never gets an entry, so fi_poll must never report it: a
 * member fi_poll reports has something to read.  Beneath active delays
 * the shim still asks its own deferred post for a completion (its copy of
 * the payload is freed on it), which lands in a's real CQ: that one is
 * the shim's, not news for the program.
 */
#include <sched.h>
#include <string.h>

#include "conform.h"

#define CF_SEL_LEN	64
/* Rounds in one process: a wrong report depends on when the shim's
   completion lands against the program's polls. */
#define CF_SEL_ROUNDS	8
/* How long fi_poll must stay silent once everything was read. */
#define CF_SEL_QUIET_NS	(20ULL * 1000000ULL)

struct cf_sel {
	struct cf_pair p;
	struct fid_poll *ps;
};

/* a's CQ was reported: it must hold an entry, and none can be there. */
static int cf_sel_tx_cq(struct cf_sel *s, const char *when)
{
	struct fi_cq_data_entry e;
	ssize_t n = fi_cq_read(s->p.a.cq, &e, 1);

	CF_CHECK(n != -FI_EAGAIN, "fi_poll %s reported a.cq, whose fi_cq_read "
		 "then returned -FI_EAGAIN: no member with nothing to read may "
		 "be reported", when);
	return cf_why("fi_poll %s reported a.cq, whose fi_cq_read returned "
		      "%zd: a send without FI_COMPLETION on a selective CQ "
		      "completed", when, n);
}

/*
 * Polls until b.cq, a.tx_cntr and b.rx_cntr were each reported; a.cq
 * must never be.
 */
static int cf_sel_poll_all(struct cf_sel *s)
{
	static const char *const names[] = {
		"b.cq's receive completion", "a.tx_cntr", "b.rx_cntr",
	};
	void *want[] = { &s->p.b, &s->p.a.tx_cntr, &s->p.b.rx_cntr };
	uint64_t deadline = cf_now_ns() + CF_WAIT_NS;
	bool seen[3] = { false };
	int left = 3, got, i, j, ret;
	void *ctx[8];

	while (left) {
		got = fi_poll(s->ps, ctx, 8);
		CF_CHECK(got >= 0 || got == -FI_EAGAIN, "fi_poll: %s",
			 fi_strerror(-got));
		for (i = 0; i < got; i++) {
			if (ctx[i] == &s->p.a &&
			    (ret = cf_sel_tx_cq(s, "during the exchange")))
				return ret;
			for (j = 0; j < 3 && ctx[i] != want[j]; j++)
				;
			CF_CHECK(j < 3, "fi_poll reported context %p, no "
				 "member's", ctx[i]);
			if (!seen[j]) {
				seen[j] = true;
				left--;
			}
		}
		for (j = 0; j < 3 && seen[j]; j++)
			;
		CF_CHECK(!left || cf_now_ns() < deadline, "fi_poll did not "
			 "report %s within %llu s", names[j],
			 CF_WAIT_NS / 1000000000ULL);
		sched_yield();
	}
	return 0;
}

/* Nothing is new: no member reported for CF_SEL_QUIET_NS. */
static int cf_sel_quiet(struct cf_sel *s)
{
	uint64_t deadline = cf_now_ns() + CF_SEL_QUIET_NS;
	void *ctx[8];
	int got, ret;

	do {
		got = fi_poll(s->ps, ctx, 8);
		CF_CHECK(got >= 0 || got == -FI_EAGAIN, "fi_poll: %s",
			 fi_strerror(-got));
		if (got > 0 && ctx[0] == &s->p.a &&
		    (ret = cf_sel_tx_cq(s, "after everything was read")))
			return ret;
		CF_CHECK(got <= 0, "fi_poll after everything was read reported "
			 "%d members (context %p)", got, ctx[0]);
		sched_yield();
	} while (cf_now_ns() < deadline);
	return 0;
}

static int cf_sel_round(struct cf_sel *s, int round)
{
	struct cf_pair *p = &s->p;
	struct iovec riov = { p->b.buf, CF_SEL_LEN }, siov = { p->a.buf,
							       CF_SEL_LEN };
	struct fi_context2 rctx, sctx;
	struct fi_msg rmsg = {
		.msg_iov = &riov, .desc = &p->b.desc, .iov_count = 1,
		.addr = p->b.peer, .context = &rctx,
	};
	struct fi_msg smsg = {
		.msg_iov = &siov, .desc = &p->a.desc, .iov_count = 1,
		.addr = p->a.peer, .context = &sctx,
	};
	struct fi_cq_data_entry e;
	uint64_t tx, rx;
	ssize_t n;
	int ret;

	memset(p->b.buf, 0, CF_SEL_LEN);
	cf_fill(p->a.buf, CF_SEL_LEN, 40 + (unsigned) round);
	CF_OK(fi_recvmsg(p->b.ep, &rmsg, FI_COMPLETION));
	CF_POST(p, fi_sendmsg(p->a.ep, &smsg, 0));
	if ((ret = cf_sel_poll_all(s)))
		return ret;
	n = fi_cq_read(p->b.cq, &e, 1);
	CF_CHECK(n == 1, "reported by fi_poll, b.cq's fi_cq_read: %s",
		 fi_strerror((int) -n));
	CF_CHECK(e.op_context == &rctx && (e.flags & FI_RECV),
		 "b.cq's completion context %p flags 0x%llx, not the receive's",
		 e.op_context, (unsigned long long) e.flags);
	CF_CHECK(cf_check(p->b.buf, CF_SEL_LEN, 40 + (unsigned) round),
		 "round %d: received bytes differ", round);
	tx = fi_cntr_read(p->a.tx_cntr);
	rx = fi_cntr_read(p->b.rx_cntr);
	CF_CHECK(tx == (uint64_t) round + 1 && rx == (uint64_t) round + 1,
		 "round %d: a.tx_cntr at %llu, b.rx_cntr at %llu", round,
		 (unsigned long long) tx, (unsigned long long) rx);
	return cf_sel_quiet(s);
}

static int cf_poll_selective(const char *prov, enum fi_ep_type type)
{
	const struct cf_pair_attr attr = {
		.type = type, .cntrs = true,
		.cq_flags = FI_SELECTIVE_COMPLETION,
	};
	struct fi_poll_attr pattr = { 0 };
	struct fid *members[4];
	struct cf_sel s;
	int i, ret;

	if ((ret = cf_pair_open(&s.p, prov, &attr)))
		return ret;
	ret = fi_poll_open(s.p.domain, &pattr, &s.ps);
	if (ret == -FI_ENOSYS || ret == -FI_EOPNOTSUPP)
		return cf_skip("%s: fi_poll_open: %s", prov, fi_strerror(-ret));
	CF_OK(ret);
	members[0] = &s.p.a.cq->fid;
	members[1] = &s.p.b.cq->fid;
	members[2] = &s.p.a.tx_cntr->fid;
	members[3] = &s.p.b.rx_cntr->fid;
	for (i = 0; i < 4; i++)
		CF_OK(fi_poll_add(s.ps, members[i], 0));
	for (i = 0; i < CF_SEL_ROUNDS; i++)
		if ((ret = cf_sel_round(&s, i)))
			return ret;
	for (i = 0; i < 4; i++)
		CF_OK(fi_poll_del(s.ps, members[i], 0));
	CF_OK(fi_close(&s.ps->fid));
	return cf_pair_close(&s.p);
}

CF_EP_TYPES(poll_selective)

const struct cf_case cf_select_cases[] = {
	CF_EP_TYPE_CASES(poll_selective),
	{ NULL, NULL },
};

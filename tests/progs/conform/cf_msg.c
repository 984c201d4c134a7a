/* SPDX-License-Identifier: MIT */
/*
 * Messages: send/receive both ways, remote CQ data, inject, tagged
 * matching with peek and claim, and connection set-up through a passive
 * endpoint (its accept, and an endpoint made from its handle).
 */
#include <sched.h>
#include <string.h>

#include "conform.h"

/* a sends len bytes of seed to b, whose receive is checked. */
static int cf_send_one(struct cf_pair *p, struct cf_side *from,
		       struct cf_side *to, size_t len, unsigned seed)
{
	struct fi_cq_data_entry e;
	int ret;

	memset(to->buf, 0, len);
	CF_OK(fi_recv(to->ep, to->buf, len, to->desc, to->peer, to));
	cf_fill(from->buf, len, seed);
	CF_POST(p, fi_send(from->ep, from->buf, len, from->desc, from->peer,
			   from));
	if ((ret = cf_cq_wait(p, from->cq, &e, "send completion")))
		return ret;
	CF_CHECK(e.op_context == from, "send completion context %p, not %p",
		 e.op_context, (void *) from);
	if ((ret = cf_cq_wait(p, to->cq, &e, "receive completion")))
		return ret;
	CF_CHECK(e.op_context == to && e.len == len,
		 "receive completion context %p len %zu, expected %p len %zu",
		 e.op_context, e.len, (void *) to, len);
	CF_CHECK(cf_check(to->buf, len, seed), "received bytes differ");
	return 0;
}

/* Messages both ways, and one of no bytes. */
static int cf_send_recv(const char *prov, enum fi_ep_type type)
{
	const struct cf_pair_attr attr = { .type = type };
	struct cf_pair p;
	int ret;

	if ((ret = cf_pair_open(&p, prov, &attr)) ||
	    (ret = cf_send_one(&p, &p.a, &p.b, 100, 1)) ||
	    (ret = cf_send_one(&p, &p.b, &p.a, CF_BUF_LEN, 2)) ||
	    (ret = cf_send_one(&p, &p.a, &p.b, 0, 3)))
		return ret;
	return cf_pair_close(&p);
}

/* Remote CQ data reaches the receiver's completion with its flag. */
static int cf_senddata(const char *prov, enum fi_ep_type type)
{
	struct cf_pair_attr attr = { .type = type, .caps = 0 };
	const uint64_t data = 0x5a5aa5a5;
	struct fi_cq_data_entry e;
	struct cf_pair p;
	int ret;

	if ((ret = cf_pair_open(&p, prov, &attr)))
		return ret;
	if (p.info->domain_attr->cq_data_size < 4)
		return cf_skip("cq_data_size %zu",
			       p.info->domain_attr->cq_data_size);
	CF_OK(fi_recv(p.b.ep, p.b.buf, 64, p.b.desc, p.b.peer, &p.b));
	cf_fill(p.a.buf, 64, 4);
	CF_POST(&p, fi_senddata(p.a.ep, p.a.buf, 64, p.a.desc, data, p.a.peer,
				&p.a));
	if ((ret = cf_cq_wait(&p, p.a.cq, NULL, "senddata completion")) ||
	    (ret = cf_cq_wait(&p, p.b.cq, &e, "receive of senddata")))
		return ret;
	CF_CHECK((e.flags & FI_REMOTE_CQ_DATA) && e.data == data,
		 "receive flags 0x%llx data 0x%llx, expected FI_REMOTE_CQ_DATA "
		 "and 0x%llx", (unsigned long long) e.flags,
		 (unsigned long long) e.data, (unsigned long long) data);
	CF_CHECK(cf_check(p.b.buf, 64, 4), "received bytes differ");
	return cf_pair_close(&p);
}

/*
 * Injects complete nothing: of three sends (inject, injectdata, send)
 * the sender's CQ holds exactly one completion, the receiver gets all
 * three in order.
 */
static int cf_inject(const char *prov, enum fi_ep_type type)
{
	struct cf_pair_attr attr = { .type = type, .caps = 0 };
	const size_t len = 32;
	struct fi_cq_data_entry e;
	struct cf_pair p;
	ssize_t n;
	int ret, i;

	if ((ret = cf_pair_open(&p, prov, &attr)))
		return ret;
	if (p.info->tx_attr->inject_size < len)
		return cf_skip("inject_size %zu", p.info->tx_attr->inject_size);
	for (i = 0; i < 3; i++)
		CF_OK(fi_recv(p.b.ep, p.b.buf + i * len, len, p.b.desc, p.b.peer,
			      &p.b));
	for (i = 0; i < 3; i++)
		cf_fill(p.a.buf + i * len, len, 10 + (unsigned) i);
	CF_POST(&p, fi_inject(p.a.ep, p.a.buf, len, p.a.peer));
	/* The buffer is the application's again once inject returns. */
	memset(p.a.buf, 0, len);
	if (p.info->domain_attr->cq_data_size >= 4)
		CF_POST(&p, fi_injectdata(p.a.ep, p.a.buf + len, len, 7,
					  p.a.peer));
	else
		CF_POST(&p, fi_inject(p.a.ep, p.a.buf + len, len, p.a.peer));
	CF_POST(&p, fi_send(p.a.ep, p.a.buf + 2 * len, len, p.a.desc,
			    p.a.peer, &p.a));
	for (i = 0; i < 3; i++) {
		if ((ret = cf_cq_wait(&p, p.b.cq, &e, "receive of an inject")))
			return ret;
		CF_CHECK(e.len == len, "receive %d of %zu bytes", i, e.len);
	}
	for (i = 0; i < 3; i++)
		CF_CHECK(cf_check(p.b.buf + i * len, len, 10 + (unsigned) i),
			 "message %d differs", i);
	if ((ret = cf_cq_wait(&p, p.a.cq, &e, "send completion")))
		return ret;
	CF_CHECK(e.op_context == &p.a, "completion context %p is not the "
		 "send's", e.op_context);
	n = fi_cq_read(p.a.cq, &e, 1);
	CF_CHECK(n == -FI_EAGAIN, "the sender's CQ holds %zd more entries "
		 "(injects must not complete)", n);
	return cf_pair_close(&p);
}

/* Tagged receives match by tag, not by order, and report the tag. */
static int cf_tagged(const char *prov, enum fi_ep_type type)
{
	struct cf_pair_attr attr = { .type = type, .caps = FI_TAGGED };
	struct fi_cq_tagged_entry e;
	struct cf_pair p;
	int ret, i;

	attr.format = FI_CQ_FORMAT_TAGGED;
	if ((ret = cf_pair_open(&p, prov, &attr)))
		return ret;
	/* Posted in the reverse order of the sends below. */
	CF_OK(fi_trecv(p.b.ep, p.b.buf + 64, 64, p.b.desc, p.b.peer, 0x22, 0,
		       &p.b.buf[64]));
	CF_OK(fi_trecv(p.b.ep, p.b.buf, 64, p.b.desc, p.b.peer, 0x11, 0,
		       &p.b.buf[0]));
	cf_fill(p.a.buf, 64, 21);
	cf_fill(p.a.buf + 64, 64, 22);
	CF_POST(&p, fi_tsend(p.a.ep, p.a.buf, 64, p.a.desc, p.a.peer, 0x11,
			     &p.a));
	CF_POST(&p, fi_tsend(p.a.ep, p.a.buf + 64, 64, p.a.desc, p.a.peer,
			     0x22, &p.a));
	for (i = 0; i < 2; i++) {
		if ((ret = cf_cq_wait_tagged(&p, p.b.cq, &e, "tagged receive")))
			return ret;
		CF_CHECK((e.op_context == &p.b.buf[0] && e.tag == 0x11) ||
			 (e.op_context == &p.b.buf[64] && e.tag == 0x22),
			 "tagged receive context %p tag 0x%llx mismatched",
			 e.op_context, (unsigned long long) e.tag);
		CF_CHECK(e.flags & FI_TAGGED, "receive flags lack FI_TAGGED");
	}
	CF_CHECK(cf_check(p.b.buf, 64, 21) && cf_check(p.b.buf + 64, 64, 22),
		 "tagged receive matched the wrong message");
	for (i = 0; i < 2; i++)
		if ((ret = cf_cq_wait_tagged(&p, p.a.cq, NULL, "tsend completion")))
			return ret;
	return cf_pair_close(&p);
}

/*
 * Peeks look after the send completed, when the message has reached the
 * receiver on every provider here: a peek step that completes nothing or
 * finds nothing within CF_PEEK_NS is one the provider does not implement.
 */
#define CF_PEEK_NS	(2ULL * 1000000000ULL)

/* A tagged receive of flags with context ctx; its CQ entry or error. */
static int cf_trecv_flags(struct cf_pair *p, void *buf, size_t len,
			  struct fi_context2 *ctx, uint64_t flags,
			  struct fi_cq_tagged_entry *e, int *err)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct fi_msg_tagged msg = {
		.msg_iov = buf ? &iov : NULL,
		.desc = buf ? &p->b.desc : NULL,
		.iov_count = buf ? 1 : 0,
		.addr = p->b.peer,
		.tag = 0x33,
		.context = ctx,
	};
	ssize_t ret = fi_trecvmsg(p->b.ep, &msg, flags);
	uint64_t deadline = cf_now_ns() + CF_PEEK_NS;
	void *got;

	if (ret == -FI_ENOSYS || ret == -FI_EOPNOTSUPP || ret == -FI_EBADFLAGS)
		return cf_skip("fi_trecvmsg flags 0x%llx: %s",
			       (unsigned long long) flags,
			       fi_strerror((int) -ret));
	CF_OK(ret);
	*err = 0;
	ret = fi_cq_read(p->b.cq, e, 1);
	while (ret == -FI_EAGAIN) {
		if (cf_now_ns() > deadline)
			return cf_skip("fi_trecvmsg flags 0x%llx completes nothing",
				       (unsigned long long) flags);
		cf_progress(p);
		ret = fi_cq_read(p->b.cq, e, 1);
	}
	if (ret == -FI_EAVAIL) {
		ret = cf_cq_wait_err(p, p->b.cq, err, &got, "peek");
		if (ret)
			return ret;
		CF_CHECK(got == ctx, "peek error entry context %p, not %p", got,
			 (void *) ctx);
		return 0;
	}
	CF_CHECK(ret == 1, "fi_cq_read after peek: %s",
		 fi_strerror((int) -ret));
	CF_CHECK(e->op_context == ctx, "peek entry context %p, not %p",
		 e->op_context, (void *) ctx);
	return 0;
}

/*
 * Peek until the message has arrived (FI_ENOMSG before), claim it, then
 * receive it through the claim: the three steps of fi_tagged(3).
 */

static int cf_peek_claim(const char *prov, enum fi_ep_type type)
{
	struct cf_pair_attr attr = { .type = type, .caps = FI_TAGGED };
	uint64_t deadline;
	struct fi_cq_tagged_entry e;
	struct fi_context2 ctx;
	struct cf_pair p;
	int ret, err;

	attr.format = FI_CQ_FORMAT_TAGGED;
	if ((ret = cf_pair_open(&p, prov, &attr)))
		return ret;
	cf_fill(p.a.buf, 80, 33);
	CF_POST(&p, fi_tsend(p.a.ep, p.a.buf, 80, p.a.desc, p.a.peer, 0x33,
			     &p.a));
	if ((ret = cf_cq_wait_tagged(&p, p.a.cq, NULL, "tsend completion")))
		return ret;
	deadline = cf_now_ns() + CF_PEEK_NS;
	do {
		if (cf_now_ns() > deadline)
			return cf_skip("a peek finds no message that was sent");
		if ((ret = cf_trecv_flags(&p, p.b.buf, 80, &ctx, FI_PEEK, &e,
					  &err)))
			return ret;
		CF_CHECK(!err || err == FI_ENOMSG, "peek error: %s",
			 fi_strerror(err));
		if (err)
			sched_yield();
	} while (err);
	CF_CHECK(e.tag == 0x33 && e.len == 80, "peek found tag 0x%llx len %zu",
		 (unsigned long long) e.tag, e.len);
	if ((ret = cf_trecv_flags(&p, p.b.buf, 80, &ctx, FI_PEEK | FI_CLAIM, &e,
				  &err)))
		return ret;
	CF_CHECK(!err, "peek and claim: %s", fi_strerror(err));
	memset(p.b.buf, 0, 80);
	if ((ret = cf_trecv_flags(&p, p.b.buf, 80, &ctx, FI_CLAIM, &e, &err)))
		return ret;
	CF_CHECK(!err && e.len == 80, "claimed receive: %s, %zu bytes",
		 fi_strerror(err), e.len);
	CF_CHECK(cf_check(p.b.buf, 80, 33), "claimed bytes differ");
	return cf_pair_close(&p);
}

CF_EP_TYPES(send_recv)
CF_EP_TYPES(senddata)
CF_EP_TYPES(inject)
CF_EP_TYPES(tagged)
CF_EP_TYPES(peek_claim)

/*
 * An active endpoint made from an fi_info whose handle is a passive
 * endpoint takes over the passive endpoint's bound socket (fi_endpoint(3));
 * it then connects to a listener as any endpoint.  The provider reads the
 * handle as its own structure.
 */
static int cf_case_msg_ep_from_pep(const char *prov)
{
	const struct cf_pair_attr attr = { .type = FI_EP_MSG };
	char want[128], got[128];
	size_t wlen = sizeof(want), glen = sizeof(got);
	struct fid_pep *bound;
	struct fi_info *info;
	struct cf_pair p;
	int ret;

	if ((ret = cf_pair_domain(&p, prov, &attr)))
		return ret;
	CF_OK(fi_passive_ep(p.fabric, p.info, &bound, NULL));
	CF_OK(fi_getname(&bound->fid, want, &wlen));
	info = fi_dupinfo(p.info);
	CF_CHECK(info, "fi_dupinfo failed");
	info->handle = &bound->fid;
	CF_OK(fi_endpoint(p.domain, info, &p.a.ep, &p.a));
	info->handle = NULL;
	fi_freeinfo(info);
	CF_OK(fi_getname(&p.a.ep->fid, got, &glen));
	CF_CHECK(glen == wlen && !memcmp(got, want, wlen),
		 "the endpoint's name is not the passive endpoint's it took");
	CF_OK(fi_close(&p.a.ep->fid));
	p.a.ep = NULL;
	CF_OK(fi_close(&bound->fid));
	return cf_pair_close(&p);
}

const struct cf_case cf_msg_cases[] = {
	CF_EP_TYPE_CASES(send_recv),
	{ "msg_ep_from_pep", cf_case_msg_ep_from_pep },
	CF_EP_TYPE_CASES(senddata),
	CF_EP_TYPE_CASES(inject),
	CF_EP_TYPE_CASES(tagged),
	CF_EP_TYPE_CASES(peek_claim),
	{ NULL, NULL },
};

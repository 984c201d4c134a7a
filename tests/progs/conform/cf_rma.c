/* SPDX-License-Identifier: MIT */
/*
 * RMA and atomics: write and read back, write with remote CQ data,
 * writemsg at an offset, inject write, and 64-bit sum, fetch-and-add,
 * compare-and-swap and inject atomics; then the vector forms: RMA with
 * two local buffers and two remote segments, atomics with two fi_ioc
 * entries (operand, compare, result) and two remote fi_rma_ioc.  Beneath
 * active delays the shim keeps vectors of up to LGP_REQ_IOV_MAX (4)
 * elements, every provider's limit here; the vector cases skip where the
 * provider's limits are below two.
 *
 * An initiator's completion of a write or non-fetching atomic need not
 * mean the target's memory holds the data yet, so those are checked by a
 * later read or by watching the target's memory within the bound; a
 * read's or fetching atomic's completion does carry the target's value.
 */
#include <sched.h>
#include <string.h>

#include "conform.h"

#define CF_HALF		(CF_BUF_LEN / 2)

static int cf_rma_open(struct cf_pair *p, const char *prov,
		       enum fi_ep_type type, uint64_t caps)
{
	struct cf_pair_attr attr = { .type = type, .caps = caps };

	return cf_pair_open(p, prov, &attr);
}

/* Closes the pair and skips for the reason given. */
static int cf_rma_skip(struct cf_pair *p, const char *why)
{
	int ret = cf_pair_close(p);

	return ret ? ret : cf_skip("%s", why);
}

/* Waits for s's completion of ctx, which must carry flags. */
static int cf_rma_done(struct cf_pair *p, struct cf_side *s, void *ctx,
		       uint64_t flags, const char *what)
{
	struct fi_cq_data_entry e;
	int ret;

	if ((ret = cf_cq_wait(p, s->cq, &e, what)))
		return ret;
	CF_CHECK(e.op_context == ctx, "%s: completion context %p, not %p",
		 what, e.op_context, ctx);
	CF_CHECK((e.flags & flags) == flags,
		 "%s: completion flags 0x%llx lack 0x%llx", what,
		 (unsigned long long) e.flags, (unsigned long long) flags);
	return 0;
}

/* An inject must leave nothing in the initiator's CQ. */
static int cf_rma_cq_empty(struct cf_pair *p, struct cf_side *s,
			   const char *what)
{
	struct fi_cq_data_entry e;
	ssize_t n = fi_cq_read(s->cq, &e, 1);

	CF_CHECK(n == -FI_EAGAIN, "%s: fi_cq_read returned %zd, expected "
		 "an empty CQ", what, n);
	return 0;
}

/* a reads len bytes at b's offset off into a.buf + CF_HALF. */
static int cf_rma_read(struct cf_pair *p, size_t off, size_t len)
{
	struct fi_context2 ctx;

	memset(p->a.buf + CF_HALF, 0, len);
	CF_POST(p, fi_read(p->a.ep, p->a.buf + CF_HALF, len, p->a.desc,
			   p->a.peer, p->a.raddr + off, p->a.key, &ctx));
	return cf_rma_done(p, &p->a, &ctx, FI_RMA | FI_READ, "read completion");
}

static int cf_rma_write_read(const char *prov, enum fi_ep_type type)
{
	struct fi_context2 ctx;
	struct cf_pair p;
	int ret;

	if ((ret = cf_rma_open(&p, prov, type, FI_RMA)))
		return ret;
	memset(p.b.buf, 0, sizeof(p.b.buf));
	cf_fill(p.a.buf, CF_HALF, 11);
	CF_POST(&p, fi_write(p.a.ep, p.a.buf, CF_HALF, p.a.desc, p.a.peer,
			     p.a.raddr, p.a.key, &ctx));
	if ((ret = cf_rma_done(&p, &p.a, &ctx, FI_RMA | FI_WRITE,
			       "write completion")) ||
	    (ret = cf_rma_read(&p, 0, CF_HALF)))
		return ret;
	CF_CHECK(cf_check(p.a.buf + CF_HALF, CF_HALF, 11),
		 "a read after a completed write returned other bytes");
	CF_CHECK(cf_check(p.b.buf, CF_HALF, 11),
		 "the target's buffer differs from what a read returned");

	/* The other way: what b stored itself, read by a. */
	cf_fill(p.b.buf, CF_HALF, 12);
	if ((ret = cf_rma_read(&p, 0, CF_HALF)))
		return ret;
	CF_CHECK(cf_check(p.a.buf + CF_HALF, CF_HALF, 12),
		 "read bytes differ from the target's buffer");
	return cf_pair_close(&p);
}

static int cf_rma_writedata(const char *prov, enum fi_ep_type type)
{
	struct fi_context2 ctx;
	struct fi_cq_data_entry e;
	struct cf_pair p;
	size_t size, len = 256;
	uint64_t data;
	int ret;

	if ((ret = cf_rma_open(&p, prov, type, FI_RMA)))
		return ret;
	size = p.info->domain_attr->cq_data_size;
	if (!size)
		return cf_rma_skip(&p, "the domain's cq_data_size is 0");
	data = 0x0123456789abcdefULL;
	if (size < sizeof(data))
		data &= (1ULL << (size * 8)) - 1;
	memset(p.b.buf, 0, sizeof(p.b.buf));
	cf_fill(p.a.buf, len, 21);
	CF_POST(&p, fi_writedata(p.a.ep, p.a.buf, len, p.a.desc, data,
				 p.a.peer, p.a.raddr, p.a.key, &ctx));
	if ((ret = cf_rma_done(&p, &p.a, &ctx, FI_RMA | FI_WRITE,
			       "writedata completion")) ||
	    (ret = cf_cq_wait(&p, p.b.cq, &e, "remote CQ data completion")))
		return ret;
	CF_CHECK(e.flags & FI_REMOTE_CQ_DATA,
		 "target completion flags 0x%llx lack FI_REMOTE_CQ_DATA",
		 (unsigned long long) e.flags);
	CF_CHECK(e.data == data, "remote CQ data 0x%llx, sent 0x%llx",
		 (unsigned long long) e.data, (unsigned long long) data);
	/* The target's completion says the data is in place. */
	CF_CHECK(cf_check(p.b.buf, len, 21),
		 "the target's buffer differs after its completion");
	return cf_pair_close(&p);
}

static int cf_rma_writemsg(const char *prov, enum fi_ep_type type)
{
	const size_t off = 1024, len = 512, edge = 64;
	struct fi_context2 ctx;
	struct cf_pair p;
	struct iovec iov;
	struct fi_rma_iov rma;
	struct fi_msg_rma msg;
	size_t i;
	int ret;

	if ((ret = cf_rma_open(&p, prov, type, FI_RMA)))
		return ret;
	memset(p.b.buf, 0, sizeof(p.b.buf));
	cf_fill(p.a.buf, len, 31);
	iov = (struct iovec) { .iov_base = p.a.buf, .iov_len = len };
	rma = (struct fi_rma_iov) { .addr = p.a.raddr + off, .len = len,
				    .key = p.a.key };
	msg = (struct fi_msg_rma) {
		.msg_iov = &iov, .desc = &p.a.desc, .iov_count = 1,
		.addr = p.a.peer, .rma_iov = &rma, .rma_iov_count = 1,
		.context = &ctx,
	};
	CF_POST(&p, fi_writemsg(p.a.ep, &msg, FI_COMPLETION));
	if ((ret = cf_rma_done(&p, &p.a, &ctx, FI_RMA | FI_WRITE,
			       "writemsg completion")))
		return ret;
	/* Read a margin either side too: the write lands exactly there. */
	if ((ret = cf_rma_read(&p, off - edge, len + 2 * edge)))
		return ret;
	for (i = 0; i < edge; i++)
		CF_CHECK(!p.a.buf[CF_HALF + i] &&
			 !p.a.buf[CF_HALF + edge + len + i],
			 "writemsg changed bytes outside its segment");
	CF_CHECK(cf_check(p.a.buf + CF_HALF + edge, len, 31),
		 "a read after a completed writemsg returned other bytes");
	return cf_pair_close(&p);
}

/* Skips unless the pair's endpoints take two local and two remote segments. */
static int cf_rma_vec_limits(struct cf_pair *p)
{
	if (p->info->tx_attr->rma_iov_limit < 2 || p->info->tx_attr->iov_limit < 2)
		return cf_rma_skip(p, "rma_iov_limit or iov_limit below 2");
	return 0;
}

/*
 * Progresses both sides until b's buffer at off holds want's len bytes:
 * a write's completion need not mean the target's memory has the data,
 * nor is a later read ordered after it (shm completes a write of two
 * remote segments at once and lets a read of one segment overtake it).
 */
static int cf_rma_settle(struct cf_pair *p, size_t off, const void *want,
			 size_t len, const char *what)
{
	uint64_t deadline = cf_now_ns() + CF_WAIT_NS;

	while (memcmp(p->b.buf + off, want, len)) {
		CF_CHECK(cf_now_ns() < deadline, "%s: the target's bytes differ "
			 "after %llu s", what, CF_WAIT_NS / 1000000000ULL);
		cf_progress(p);
		sched_yield();
	}
	return 0;
}

/*
 * A write of two local buffers to two remote segments, with a gap between
 * them that must stay untouched: one message, delayed as one.
 */
static int cf_rma_writemsg_segments(const char *prov, enum fi_ep_type type)
{
	const size_t len = 256, gap = 512;
	struct fi_context2 ctx;
	struct fi_rma_iov rma[2];
	struct fi_msg_rma msg;
	struct iovec iov[2];
	void *desc[2];
	struct cf_pair p;
	size_t i;
	int ret;

	if ((ret = cf_rma_open(&p, prov, type, FI_RMA)) ||
	    (ret = cf_rma_vec_limits(&p)))
		return ret;
	memset(p.b.buf, 0, sizeof(p.b.buf));
	cf_fill(p.a.buf, 2 * len, 35);
	iov[0] = (struct iovec) { .iov_base = p.a.buf, .iov_len = len };
	iov[1] = (struct iovec) { .iov_base = p.a.buf + len, .iov_len = len };
	desc[0] = desc[1] = p.a.desc;
	rma[0] = (struct fi_rma_iov) { .addr = p.a.raddr, .len = len,
				       .key = p.a.key };
	rma[1] = (struct fi_rma_iov) { .addr = p.a.raddr + len + gap,
				       .len = len, .key = p.a.key };
	msg = (struct fi_msg_rma) {
		.msg_iov = iov, .desc = desc, .iov_count = 2,
		.addr = p.a.peer, .rma_iov = rma, .rma_iov_count = 2,
		.context = &ctx,
	};
	CF_POST(&p, fi_writemsg(p.a.ep, &msg, FI_COMPLETION));
	/* The vectors are the caller's again once the call returns. */
	memset(iov, 0, sizeof(iov));
	memset(rma, 0, sizeof(rma));
	if ((ret = cf_rma_done(&p, &p.a, &ctx, FI_RMA | FI_WRITE,
			       "two-segment writemsg completion")) ||
	    (ret = cf_rma_settle(&p, 0, p.a.buf, len, "the first segment")) ||
	    (ret = cf_rma_settle(&p, len + gap, p.a.buf + len, len,
				 "the second segment")) ||
	    (ret = cf_rma_read(&p, 0, 2 * len + gap)))
		return ret;
	CF_CHECK(cf_check(p.a.buf + CF_HALF, len, 35),
		 "the first segment differs");
	for (i = 0; i < gap; i++)
		CF_CHECK(!p.a.buf[CF_HALF + len + i],
			 "writemsg changed bytes between its segments");
	CF_CHECK(!memcmp(p.a.buf + CF_HALF + len + gap, p.a.buf + len, len),
		 "the second segment differs");
	return cf_pair_close(&p);
}

/* fi_readv of one remote segment into two local buffers apart. */
static int cf_rma_readv(const char *prov, enum fi_ep_type type)
{
	const size_t len = 256, apart = 1024;
	struct fi_context2 ctx;
	struct iovec iov[2];
	void *desc[2];
	struct cf_pair p;
	int ret;

	if ((ret = cf_rma_open(&p, prov, type, FI_RMA)) ||
	    (ret = cf_rma_vec_limits(&p)))
		return ret;
	cf_fill(p.b.buf, 2 * len, 51);
	memset(p.a.buf + CF_HALF, 0, CF_HALF);
	iov[0] = (struct iovec) { .iov_base = p.a.buf + CF_HALF,
				  .iov_len = len };
	iov[1] = (struct iovec) { .iov_base = p.a.buf + CF_HALF + apart,
				  .iov_len = len };
	desc[0] = desc[1] = p.a.desc;
	CF_POST(&p, fi_readv(p.a.ep, iov, desc, 2, p.a.peer, p.a.raddr,
			     p.a.key, &ctx));
	memset(iov, 0, sizeof(iov));
	if ((ret = cf_rma_done(&p, &p.a, &ctx, FI_RMA | FI_READ,
			       "readv completion")))
		return ret;
	CF_CHECK(cf_check(p.a.buf + CF_HALF, len, 51),
		 "the first local buffer differs from the target's bytes");
	CF_CHECK(!memcmp(p.a.buf + CF_HALF + apart, p.b.buf + len, len),
		 "the second local buffer differs from the target's bytes");
	CF_CHECK(!p.a.buf[CF_HALF + len] && !p.a.buf[CF_HALF + apart - 1] &&
		 !p.a.buf[CF_HALF + apart + len],
		 "readv wrote outside its local buffers");
	return cf_pair_close(&p);
}

/*
 * fi_readmsg of two remote segments (in reverse order) into two local
 * buffers of other lengths: the segments' bytes run through the buffers.
 */
static int cf_rma_readmsg_segments(const char *prov, enum fi_ep_type type)
{
	const size_t len = 256, gap = 512, apart = 1024;
	struct fi_context2 ctx;
	struct fi_rma_iov rma[2];
	struct fi_msg_rma msg;
	struct iovec iov[2];
	char want[2 * 256];
	void *desc[2];
	struct cf_pair p;
	int ret;

	if ((ret = cf_rma_open(&p, prov, type, FI_RMA)) ||
	    (ret = cf_rma_vec_limits(&p)))
		return ret;
	cf_fill(p.b.buf, 2 * len + gap, 55);
	memcpy(want, p.b.buf + len + gap, len);
	memcpy(want + len, p.b.buf, len);
	memset(p.a.buf + CF_HALF, 0, CF_HALF);
	iov[0] = (struct iovec) { .iov_base = p.a.buf + CF_HALF,
				  .iov_len = len / 2 };
	iov[1] = (struct iovec) { .iov_base = p.a.buf + CF_HALF + apart,
				  .iov_len = len + len / 2 };
	desc[0] = desc[1] = p.a.desc;
	rma[0] = (struct fi_rma_iov) { .addr = p.a.raddr + len + gap,
				       .len = len, .key = p.a.key };
	rma[1] = (struct fi_rma_iov) { .addr = p.a.raddr, .len = len,
				       .key = p.a.key };
	msg = (struct fi_msg_rma) {
		.msg_iov = iov, .desc = desc, .iov_count = 2,
		.addr = p.a.peer, .rma_iov = rma, .rma_iov_count = 2,
		.context = &ctx,
	};
	CF_POST(&p, fi_readmsg(p.a.ep, &msg, FI_COMPLETION));
	memset(iov, 0, sizeof(iov));
	memset(rma, 0, sizeof(rma));
	if ((ret = cf_rma_done(&p, &p.a, &ctx, FI_RMA | FI_READ,
			       "two-segment readmsg completion")))
		return ret;
	CF_CHECK(!memcmp(p.a.buf + CF_HALF, want, len / 2) &&
		 !memcmp(p.a.buf + CF_HALF + apart, want + len / 2,
			 len + len / 2),
		 "the local buffers differ from the remote segments");
	CF_CHECK(!p.a.buf[CF_HALF + len / 2] &&
		 !p.a.buf[CF_HALF + apart + len + len / 2],
		 "readmsg wrote outside its local buffers");
	return cf_pair_close(&p);
}

static int cf_rma_inject_write(const char *prov, enum fi_ep_type type)
{
	const size_t len = 32;
	uint64_t deadline;
	struct cf_pair p;
	int ret;

	if ((ret = cf_rma_open(&p, prov, type, FI_RMA)))
		return ret;
	if (p.info->tx_attr->inject_size < len)
		return cf_rma_skip(&p, "inject_size below 32 bytes");
	memset(p.b.buf, 0, sizeof(p.b.buf));
	cf_fill(p.a.buf, len, 41);
	CF_POST(&p, fi_inject_write(p.a.ep, p.a.buf, len, p.a.peer, p.a.raddr,
				    p.a.key));
	/* The buffer is the caller's again once inject returns. */
	cf_fill(p.a.buf, len, 42);
	/* No completion to wait for: read until the data shows. */
	deadline = cf_now_ns() + CF_WAIT_NS;
	for (;;) {
		if ((ret = cf_rma_read(&p, 0, len)))
			return ret;
		if (cf_check(p.a.buf + CF_HALF, len, 41))
			break;
		CF_CHECK(cf_now_ns() < deadline, "inject_write's data not "
			 "readable within %llu s", CF_WAIT_NS / 1000000000ULL);
	}
	CF_CHECK(cf_check(p.b.buf, len, 41),
		 "the target's buffer differs from what a read returned");
	if ((ret = cf_rma_cq_empty(&p, &p.a, "after inject_write")))
		return ret;
	return cf_pair_close(&p);
}

/* ---- atomics ---------------------------------------------------------- */

/*
 * Buffers of one 64-bit element: the target at b.buf, and at a the
 * operand, compare value and result.
 */
enum { CF_OPERAND, CF_COMPARE, CF_RESULT };

static uint64_t *cf_u64(struct cf_side *s, size_t i)
{
	return (uint64_t *) (void *) s->buf + i;
}

/*
 * A pair whose domain does op on FI_UINT64 as flags ask (0,
 * FI_FETCH_ATOMIC or FI_COMPARE_ATOMIC), both buffers zeroed.
 */
static int cf_atomic_open(struct cf_pair *p, const char *prov,
			  enum fi_ep_type type, enum fi_op op, uint64_t flags)
{
	struct fi_atomic_attr attr;
	int ret;

	if ((ret = cf_rma_open(p, prov, type, FI_ATOMIC)))
		return ret;
	ret = fi_query_atomic(p->domain, FI_UINT64, op, &attr, flags);
	if (ret == -FI_EOPNOTSUPP || ret == -FI_ENOSYS)
		return cf_rma_skip(p, flags & FI_COMPARE_ATOMIC ?
				   "no compare atomic on FI_UINT64" :
				   flags & FI_FETCH_ATOMIC ?
				   "no fetch atomic on FI_UINT64" :
				   "no atomic on FI_UINT64");
	CF_OK(ret);
	CF_CHECK(attr.size == sizeof(uint64_t) && attr.count >= 1,
		 "fi_query_atomic: FI_UINT64 size %zu count %zu",
		 attr.size, attr.count);
	/*
	 * rxd 1.17 completes a fetching atomic once its request is sent,
	 * before the old value is back, and crashes if then polled longer
	 * (seen on the bare provider): a provider bug, not one of the shim's.
	 */
	if (flags && strstr(p->info->fabric_attr->prov_name, "ofi_rxd"))
		return cf_rma_skip(p, "ofi_rxd 1.17 completes fetching atomics "
				   "before their result");
	memset(p->a.buf, 0, sizeof(p->a.buf));
	memset(p->b.buf, 0, sizeof(p->b.buf));
	return 0;
}

/* Progresses both sides until b's target element i holds want. */
static int cf_atomic_settle_at(struct cf_pair *p, size_t i, uint64_t want,
			       const char *what)
{
	volatile uint64_t *target = cf_u64(&p->b, i);
	uint64_t deadline = cf_now_ns() + CF_WAIT_NS;

	while (*target != want) {
		CF_CHECK(cf_now_ns() < deadline, "%s: target %llu, not %llu "
			 "within %llu s", what, (unsigned long long) *target,
			 (unsigned long long) want, CF_WAIT_NS / 1000000000ULL);
		cf_progress(p);
		sched_yield();
	}
	return 0;
}

/* Progresses both sides until b's target (element 0) holds want. */
static int cf_atomic_settle(struct cf_pair *p, uint64_t want,
			    const char *what)
{
	return cf_atomic_settle_at(p, 0, want, what);
}

/* a adds operand to b's target, which must then read want. */
static int cf_atomic_add(struct cf_pair *p, uint64_t operand, uint64_t want,
			 const char *what)
{
	struct fi_context2 ctx;
	int ret;

	*cf_u64(&p->a, CF_OPERAND) = operand;
	CF_POST(p, fi_atomic(p->a.ep, cf_u64(&p->a, CF_OPERAND), 1, p->a.desc,
			     p->a.peer, p->a.raddr, p->a.key, FI_UINT64, FI_SUM,
			     &ctx));
	if ((ret = cf_rma_done(p, &p->a, &ctx, FI_ATOMIC | FI_WRITE,
			       "atomic completion")))
		return ret;
	return cf_atomic_settle(p, want, what);
}

/* FI_SUM twice, the second wrapping around 2^64. */
static int cf_atomic_sum(const char *prov, enum fi_ep_type type)
{
	struct cf_pair p;
	int ret;

	if ((ret = cf_atomic_open(&p, prov, type, FI_SUM, 0)))
		return ret;
	*cf_u64(&p.b, 0) = 1000;
	if ((ret = cf_atomic_add(&p, 234, 1234, "FI_SUM")) ||
	    (ret = cf_atomic_add(&p, UINT64_MAX, 1233, "FI_SUM wrapping")))
		return ret;
	return cf_pair_close(&p);
}

/* a adds operand to b's target; the old value must come back. */
static int cf_atomic_fetch_one(struct cf_pair *p, uint64_t operand,
			       uint64_t old)
{
	struct fi_context2 ctx;
	uint64_t *res = cf_u64(&p->a, CF_RESULT);
	int ret;

	*cf_u64(&p->a, CF_OPERAND) = operand;
	*res = 0xdeadbeef;
	CF_POST(p, fi_fetch_atomic(p->a.ep, cf_u64(&p->a, CF_OPERAND), 1,
				   p->a.desc, res, p->a.desc, p->a.peer,
				   p->a.raddr, p->a.key, FI_UINT64, FI_SUM,
				   &ctx));
	if ((ret = cf_rma_done(p, &p->a, &ctx, FI_ATOMIC | FI_READ,
			       "fetch atomic completion")))
		return ret;
	CF_CHECK(*res == old, "fetch atomic returned %llu, the target held %llu",
		 (unsigned long long) *res, (unsigned long long) old);
	/* The fetched value came back, so the sum is done at the target. */
	CF_CHECK(*cf_u64(&p->b, 0) == old + operand,
		 "target %llu after the fetch atomic, expected %llu",
		 (unsigned long long) *cf_u64(&p->b, 0),
		 (unsigned long long) (old + operand));
	return 0;
}

static int cf_atomic_fetch(const char *prov, enum fi_ep_type type)
{
	struct cf_pair p;
	int ret;

	if ((ret = cf_atomic_open(&p, prov, type, FI_SUM, FI_FETCH_ATOMIC)))
		return ret;
	*cf_u64(&p.b, 0) = 5;
	if ((ret = cf_atomic_fetch_one(&p, 37, 5)) ||
	    (ret = cf_atomic_fetch_one(&p, 1ULL << 40, 42)) ||
	    (ret = cf_atomic_fetch_one(&p, 0, 42 + (1ULL << 40))))
		return ret;
	return cf_pair_close(&p);
}

/* a swaps in swap if b's target equals cmp; old is the target's value. */
static int cf_atomic_cswap_one(struct cf_pair *p, uint64_t cmp, uint64_t swap,
			       uint64_t old)
{
	struct fi_context2 ctx;
	uint64_t *res = cf_u64(&p->a, CF_RESULT), want = old == cmp ? swap : old;
	int ret;

	*cf_u64(&p->a, CF_OPERAND) = swap;
	*cf_u64(&p->a, CF_COMPARE) = cmp;
	*res = 0xdeadbeef;
	CF_POST(p, fi_compare_atomic(p->a.ep, cf_u64(&p->a, CF_OPERAND), 1,
				     p->a.desc, cf_u64(&p->a, CF_COMPARE),
				     p->a.desc, res, p->a.desc, p->a.peer,
				     p->a.raddr, p->a.key, FI_UINT64, FI_CSWAP,
				     &ctx));
	if ((ret = cf_rma_done(p, &p->a, &ctx, FI_ATOMIC | FI_READ,
			       "compare atomic completion")))
		return ret;
	CF_CHECK(*res == old, "FI_CSWAP returned %llu, the target held %llu",
		 (unsigned long long) *res, (unsigned long long) old);
	CF_CHECK(*cf_u64(&p->b, 0) == want,
		 "target %llu after FI_CSWAP of %llu for %llu, expected %llu",
		 (unsigned long long) *cf_u64(&p->b, 0),
		 (unsigned long long) cmp, (unsigned long long) swap,
		 (unsigned long long) want);
	return 0;
}

static int cf_atomic_compare(const char *prov, enum fi_ep_type type)
{
	struct cf_pair p;
	int ret;

	if ((ret = cf_atomic_open(&p, prov, type, FI_CSWAP,
				  FI_COMPARE_ATOMIC)))
		return ret;
	*cf_u64(&p.b, 0) = 7;
	if ((ret = cf_atomic_cswap_one(&p, 7, 99, 7)) ||
	    (ret = cf_atomic_cswap_one(&p, 7, 55, 99)) ||
	    (ret = cf_atomic_cswap_one(&p, 99, UINT64_MAX, 99)))
		return ret;
	return cf_pair_close(&p);
}

static int cf_atomic_inject(const char *prov, enum fi_ep_type type)
{
	struct fi_context2 ctx;
	struct cf_pair p;
	int ret;

	if ((ret = cf_atomic_open(&p, prov, type, FI_SUM, 0)))
		return ret;
	if (p.info->tx_attr->inject_size < sizeof(uint64_t))
		return cf_rma_skip(&p, "inject_size below 8 bytes");
	*cf_u64(&p.b, 0) = 300;
	*cf_u64(&p.a, CF_OPERAND) = 20;
	CF_POST(&p, fi_inject_atomic(p.a.ep, cf_u64(&p.a, CF_OPERAND), 1,
				     p.a.peer, p.a.raddr, p.a.key, FI_UINT64,
				     FI_SUM));
	/* The operand is the caller's again once inject returns. */
	*cf_u64(&p.a, CF_OPERAND) = 4000;
	CF_POST(&p, fi_inject_atomic(p.a.ep, cf_u64(&p.a, CF_OPERAND), 1,
				     p.a.peer, p.a.raddr, p.a.key, FI_UINT64,
				     FI_SUM));
	*cf_u64(&p.a, CF_OPERAND) = 0;
	if ((ret = cf_atomic_settle(&p, 4320, "inject atomic FI_SUM")) ||
	    (ret = cf_rma_cq_empty(&p, &p.a, "after inject atomics")))
		return ret;
	/*
	 * A provider may answer every atomic (rxm does); one that completes
	 * after the injects has their answers in before the pair closes.
	 * Closing with a peer's answers on the wire is a life-cycle case.
	 */
	CF_POST(&p, fi_atomic(p.a.ep, cf_u64(&p.a, CF_OPERAND), 1, p.a.desc,
			      p.a.peer, p.a.raddr, p.a.key, FI_UINT64, FI_SUM,
			      &ctx));
	if ((ret = cf_rma_done(&p, &p.a, &ctx, FI_ATOMIC | FI_WRITE,
			       "atomic completion after the injects")) ||
	    (ret = cf_atomic_settle(&p, 4320, "FI_SUM of 0 after the injects")))
		return ret;
	return cf_pair_close(&p);
}

/* ---- vector atomics ---------------------------------------------------- */

/*
 * Elements of a's buffer the vector atomics take their operands, compare
 * values and results from; b's targets are elements 0 to 3.
 */
enum { CF_VOPERAND = 8, CF_VCOMPARE = 16, CF_VRESULT = 24 };

/* cf_atomic_open, skipping unless two elements fit every vector. */
static int cf_atomic_vec_open(struct cf_pair *p, const char *prov,
			      enum fi_ep_type type, enum fi_op op,
			      uint64_t flags)
{
	struct fi_atomic_attr attr;
	int ret;

	if ((ret = cf_atomic_open(p, prov, type, op, flags)) ||
	    (ret = cf_rma_vec_limits(p)))
		return ret;
	CF_OK(fi_query_atomic(p->domain, FI_UINT64, op, &attr, flags));
	if (attr.count < 2)
		return cf_rma_skip(p, "fewer than two FI_UINT64 elements per "
				   "atomic");
	return 0;
}

/* Two fi_ioc of one element each at a's element i and i + 1. */
static void cf_ioc2(struct cf_pair *p, struct fi_ioc *ioc, void **desc,
		    size_t i)
{
	ioc[0] = (struct fi_ioc) { .addr = cf_u64(&p->a, i), .count = 1 };
	ioc[1] = (struct fi_ioc) { .addr = cf_u64(&p->a, i + 1), .count = 1 };
	desc[0] = desc[1] = p->a.desc;
}

/* Remote fi_rma_ioc of one element each at b's elements i and j. */
static void cf_rma_ioc2(struct cf_pair *p, struct fi_rma_ioc *rma, size_t i,
			size_t j)
{
	rma[0] = (struct fi_rma_ioc) { .addr = p->a.raddr + i * 8, .count = 1,
				       .key = p->a.key };
	rma[1] = (struct fi_rma_ioc) { .addr = p->a.raddr + j * 8, .count = 1,
				       .key = p->a.key };
}

/*
 * FI_SUM of two operand fi_ioc onto two adjacent elements (fi_atomicv),
 * then onto two elements apart (fi_atomicmsg with two fi_rma_ioc).  The
 * operands are overwritten once each completes: an atomic's completion
 * frees its buffers.
 */
static int cf_atomic_writev(const char *prov, enum fi_ep_type type)
{
	struct fi_context2 ctx;
	struct fi_rma_ioc rma[2];
	struct fi_msg_atomic msg;
	struct fi_ioc ioc[2];
	void *desc[2];
	struct cf_pair p;
	int ret;

	if ((ret = cf_atomic_vec_open(&p, prov, type, FI_SUM, 0)))
		return ret;
	*cf_u64(&p.b, 0) = 100;
	*cf_u64(&p.b, 1) = 200;
	*cf_u64(&p.b, 3) = 400;
	*cf_u64(&p.a, CF_VOPERAND) = 1;
	*cf_u64(&p.a, CF_VOPERAND + 1) = 2;
	cf_ioc2(&p, ioc, desc, CF_VOPERAND);
	CF_POST(&p, fi_atomicv(p.a.ep, ioc, desc, 2, p.a.peer, p.a.raddr,
			       p.a.key, FI_UINT64, FI_SUM, &ctx));
	memset(ioc, 0, sizeof(ioc));
	if ((ret = cf_rma_done(&p, &p.a, &ctx, FI_ATOMIC | FI_WRITE,
			       "atomicv completion")))
		return ret;
	*cf_u64(&p.a, CF_VOPERAND) = *cf_u64(&p.a, CF_VOPERAND + 1) = 1000;
	if ((ret = cf_atomic_settle_at(&p, 0, 101, "atomicv's first element")) ||
	    (ret = cf_atomic_settle_at(&p, 1, 202, "atomicv's second element")))
		return ret;

	*cf_u64(&p.a, CF_VOPERAND) = 3;
	*cf_u64(&p.a, CF_VOPERAND + 1) = 4;
	cf_ioc2(&p, ioc, desc, CF_VOPERAND);
	cf_rma_ioc2(&p, rma, 0, 3);
	msg = (struct fi_msg_atomic) {
		.msg_iov = ioc, .desc = desc, .iov_count = 2,
		.addr = p.a.peer, .rma_iov = rma, .rma_iov_count = 2,
		.datatype = FI_UINT64, .op = FI_SUM, .context = &ctx,
	};
	CF_POST(&p, fi_atomicmsg(p.a.ep, &msg, FI_COMPLETION));
	memset(ioc, 0, sizeof(ioc));
	memset(rma, 0, sizeof(rma));
	if ((ret = cf_rma_done(&p, &p.a, &ctx, FI_ATOMIC | FI_WRITE,
			       "atomicmsg completion")))
		return ret;
	*cf_u64(&p.a, CF_VOPERAND) = *cf_u64(&p.a, CF_VOPERAND + 1) = 1000;
	if ((ret = cf_atomic_settle_at(&p, 0, 104, "atomicmsg's first element")) ||
	    (ret = cf_atomic_settle_at(&p, 3, 404, "atomicmsg's second element")))
		return ret;
	CF_CHECK(*cf_u64(&p.b, 1) == 202 && *cf_u64(&p.b, 2) == 0,
		 "atomicmsg changed elements between its segments");
	return cf_pair_close(&p);
}

/* Checks a's results and b's targets after a fetching vector atomic. */
static int cf_atomic_vec_check(struct cf_pair *p, const uint64_t *res,
			       const size_t *el, const uint64_t *target,
			       const char *what)
{
	size_t i;

	for (i = 0; i < 2; i++) {
		CF_CHECK(*cf_u64(&p->a, CF_VRESULT + 2 * i) == res[i],
			 "%s: result %zu is %llu, the target held %llu", what,
			 i, (unsigned long long) *cf_u64(&p->a, CF_VRESULT + 2 * i),
			 (unsigned long long) res[i]);
		CF_CHECK(*cf_u64(&p->b, el[i]) == target[i],
			 "%s: target element %zu is %llu, expected %llu", what,
			 el[i], (unsigned long long) *cf_u64(&p->b, el[i]),
			 (unsigned long long) target[i]);
	}
	return 0;
}

/* Two result fi_ioc apart, at a's elements CF_VRESULT and CF_VRESULT + 2. */
static void cf_res2(struct cf_pair *p, struct fi_ioc *res, void **desc)
{
	*cf_u64(&p->a, CF_VRESULT) = *cf_u64(&p->a, CF_VRESULT + 2) = 0xdead;
	res[0] = (struct fi_ioc) { .addr = cf_u64(&p->a, CF_VRESULT),
				   .count = 1 };
	res[1] = (struct fi_ioc) { .addr = cf_u64(&p->a, CF_VRESULT + 2),
				   .count = 1 };
	desc[0] = desc[1] = p->a.desc;
}

/*
 * Fetch-and-add of two operand fi_ioc onto two adjacent elements, the old
 * values coming back into two result fi_ioc (fi_fetch_atomicv); then onto
 * two elements apart, in reverse order (fi_fetch_atomicmsg).
 */
static int cf_atomic_fetchv(const char *prov, enum fi_ep_type type)
{
	struct fi_context2 ctx;
	struct fi_rma_ioc rma[2];
	struct fi_msg_atomic msg;
	struct fi_ioc ioc[2], res[2];
	void *desc[2], *res_desc[2];
	struct cf_pair p;
	int ret;

	if ((ret = cf_atomic_vec_open(&p, prov, type, FI_SUM, FI_FETCH_ATOMIC)))
		return ret;
	*cf_u64(&p.b, 0) = 10;
	*cf_u64(&p.b, 1) = 20;
	*cf_u64(&p.b, 3) = 40;
	*cf_u64(&p.a, CF_VOPERAND) = 5;
	*cf_u64(&p.a, CF_VOPERAND + 1) = 6;
	cf_ioc2(&p, ioc, desc, CF_VOPERAND);
	cf_res2(&p, res, res_desc);
	CF_POST(&p, fi_fetch_atomicv(p.a.ep, ioc, desc, 2, res, res_desc, 2,
				     p.a.peer, p.a.raddr, p.a.key, FI_UINT64,
				     FI_SUM, &ctx));
	memset(ioc, 0, sizeof(ioc));
	memset(res, 0, sizeof(res));
	if ((ret = cf_rma_done(&p, &p.a, &ctx, FI_ATOMIC | FI_READ,
			       "fetch_atomicv completion")) ||
	    (ret = cf_atomic_vec_check(&p, (uint64_t[]) { 10, 20 },
				       (size_t[]) { 0, 1 },
				       (uint64_t[]) { 15, 26 },
				       "fetch_atomicv")))
		return ret;

	*cf_u64(&p.a, CF_VOPERAND) = 7;
	*cf_u64(&p.a, CF_VOPERAND + 1) = 8;
	cf_ioc2(&p, ioc, desc, CF_VOPERAND);
	cf_res2(&p, res, res_desc);
	cf_rma_ioc2(&p, rma, 3, 0);
	msg = (struct fi_msg_atomic) {
		.msg_iov = ioc, .desc = desc, .iov_count = 2,
		.addr = p.a.peer, .rma_iov = rma, .rma_iov_count = 2,
		.datatype = FI_UINT64, .op = FI_SUM, .context = &ctx,
	};
	CF_POST(&p, fi_fetch_atomicmsg(p.a.ep, &msg, res, res_desc, 2,
				       FI_COMPLETION));
	memset(ioc, 0, sizeof(ioc));
	memset(res, 0, sizeof(res));
	memset(rma, 0, sizeof(rma));
	if ((ret = cf_rma_done(&p, &p.a, &ctx, FI_ATOMIC | FI_READ,
			       "fetch_atomicmsg completion")) ||
	    (ret = cf_atomic_vec_check(&p, (uint64_t[]) { 40, 15 },
				       (size_t[]) { 3, 0 },
				       (uint64_t[]) { 47, 23 },
				       "fetch_atomicmsg")))
		return ret;
	return cf_pair_close(&p);
}

/*
 * FI_CSWAP of two elements, one matching its compare value and one not,
 * with operand, compare and result vectors of two fi_ioc each
 * (fi_compare_atomicv), then onto two elements apart
 * (fi_compare_atomicmsg).
 */
static int cf_atomic_comparev(const char *prov, enum fi_ep_type type)
{
	struct fi_context2 ctx;
	struct fi_rma_ioc rma[2];
	struct fi_msg_atomic msg;
	struct fi_ioc ioc[2], cmp[2], res[2];
	void *desc[2], *cmp_desc[2], *res_desc[2];
	struct cf_pair p;
	int ret;

	if ((ret = cf_atomic_vec_open(&p, prov, type, FI_CSWAP,
				      FI_COMPARE_ATOMIC)))
		return ret;
	*cf_u64(&p.b, 0) = 7;
	*cf_u64(&p.b, 1) = 8;
	*cf_u64(&p.b, 3) = 30;
	*cf_u64(&p.a, CF_VOPERAND) = 70;
	*cf_u64(&p.a, CF_VOPERAND + 1) = 80;
	*cf_u64(&p.a, CF_VCOMPARE) = 7;
	*cf_u64(&p.a, CF_VCOMPARE + 1) = 9;
	cf_ioc2(&p, ioc, desc, CF_VOPERAND);
	cf_ioc2(&p, cmp, cmp_desc, CF_VCOMPARE);
	cf_res2(&p, res, res_desc);
	CF_POST(&p, fi_compare_atomicv(p.a.ep, ioc, desc, 2, cmp, cmp_desc, 2,
				       res, res_desc, 2, p.a.peer, p.a.raddr,
				       p.a.key, FI_UINT64, FI_CSWAP, &ctx));
	memset(ioc, 0, sizeof(ioc));
	memset(cmp, 0, sizeof(cmp));
	memset(res, 0, sizeof(res));
	if ((ret = cf_rma_done(&p, &p.a, &ctx, FI_ATOMIC | FI_READ,
			       "compare_atomicv completion")) ||
	    (ret = cf_atomic_vec_check(&p, (uint64_t[]) { 7, 8 },
				       (size_t[]) { 0, 1 },
				       (uint64_t[]) { 70, 8 },
				       "compare_atomicv")))
		return ret;

	*cf_u64(&p.a, CF_VOPERAND) = 31;
	*cf_u64(&p.a, CF_VOPERAND + 1) = 71;
	*cf_u64(&p.a, CF_VCOMPARE) = 30;
	*cf_u64(&p.a, CF_VCOMPARE + 1) = 70;
	cf_ioc2(&p, ioc, desc, CF_VOPERAND);
	cf_ioc2(&p, cmp, cmp_desc, CF_VCOMPARE);
	cf_res2(&p, res, res_desc);
	cf_rma_ioc2(&p, rma, 3, 0);
	msg = (struct fi_msg_atomic) {
		.msg_iov = ioc, .desc = desc, .iov_count = 2,
		.addr = p.a.peer, .rma_iov = rma, .rma_iov_count = 2,
		.datatype = FI_UINT64, .op = FI_CSWAP, .context = &ctx,
	};
	CF_POST(&p, fi_compare_atomicmsg(p.a.ep, &msg, cmp, cmp_desc, 2, res,
					 res_desc, 2, FI_COMPLETION));
	memset(ioc, 0, sizeof(ioc));
	memset(cmp, 0, sizeof(cmp));
	memset(res, 0, sizeof(res));
	memset(rma, 0, sizeof(rma));
	if ((ret = cf_rma_done(&p, &p.a, &ctx, FI_ATOMIC | FI_READ,
			       "compare_atomicmsg completion")) ||
	    (ret = cf_atomic_vec_check(&p, (uint64_t[]) { 30, 70 },
				       (size_t[]) { 3, 0 },
				       (uint64_t[]) { 31, 71 },
				       "compare_atomicmsg")))
		return ret;
	return cf_pair_close(&p);
}

CF_EP_TYPES(rma_write_read)
CF_EP_TYPES(rma_writedata)
CF_EP_TYPES(rma_writemsg)
CF_EP_TYPES(rma_writemsg_segments)
CF_EP_TYPES(rma_readv)
CF_EP_TYPES(rma_readmsg_segments)
CF_EP_TYPES(rma_inject_write)
CF_EP_TYPES(atomic_sum)
CF_EP_TYPES(atomic_fetch)
CF_EP_TYPES(atomic_compare)
CF_EP_TYPES(atomic_inject)
CF_EP_TYPES(atomic_writev)
CF_EP_TYPES(atomic_fetchv)
CF_EP_TYPES(atomic_comparev)

const struct cf_case cf_rma_cases[] = {
	CF_EP_TYPE_CASES(rma_write_read),
	CF_EP_TYPE_CASES(rma_writedata),
	CF_EP_TYPE_CASES(rma_writemsg),
	CF_EP_TYPE_CASES(rma_writemsg_segments),
	CF_EP_TYPE_CASES(rma_readv),
	CF_EP_TYPE_CASES(rma_readmsg_segments),
	CF_EP_TYPE_CASES(rma_inject_write),
	CF_EP_TYPE_CASES(atomic_sum),
	CF_EP_TYPE_CASES(atomic_fetch),
	CF_EP_TYPE_CASES(atomic_compare),
	CF_EP_TYPE_CASES(atomic_inject),
	CF_EP_TYPE_CASES(atomic_writev),
	CF_EP_TYPE_CASES(atomic_fetchv),
	CF_EP_TYPE_CASES(atomic_comparev),
	{ NULL, NULL },
};

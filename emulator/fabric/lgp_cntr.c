/* SPDX-License-Identifier: MIT */
/*
 * Counter wrapper.  A counter bound to count receives charges o_r for every
 * completion it newly reports, like a CQ does per receive entry.
 *
 * While delays are active a counter read is a call into the domain like a
 * CQ read, and releases the sends that are due first: a program that
 * polls only counters (fabtests' fi_rdm_rma_event, ft_spin_for_cntr) waits
 * for its own writes, whose send counter moves only once the shim has
 * posted them.  Left to the progress thread, they waited for a free core,
 * which a program spinning on each core never leaves.
 */
#include <stdlib.h>

#include <lgp/clock.h>

#include "lgp_cntr.h"
#include "lgp_domain.h"
#include "lgp_engine.h"
#include "lgp_fid.h"

static struct lgp_cntr *lgp_cntr_of(struct fid_cntr *cntr)
{
	return lgp_container_of(cntr, struct lgp_cntr, cntr);
}

static int lgp_cntr_close(struct fid *fid)
{
	struct lgp_cntr *c = lgp_container_of(fid, struct lgp_cntr, cntr.fid);
	int ret;

	ret = fi_close(&c->hcntr->fid);
	if (ret)
		return ret;
	free(c);
	return 0;
}

struct fi_ops lgp_cntr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lgp_cntr_close,
	.bind = lgp_fid_bind,
	.control = lgp_fid_control,
	.ops_open = lgp_fid_ops_open,
	.tostr = lgp_fid_tostr,
	.ops_set = lgp_fid_ops_set,
};

/* The counter moved to value: spend o_r for each new receive. */
static uint64_t lgp_cntr_charge(struct lgp_cntr *c, uint64_t value)
{
	uint64_t seen;

	if (!__atomic_load_n(&c->dom->eng.params.recv_overhead_ns, __ATOMIC_RELAXED) ||
	    !c->counts_recv)
		return value;
	seen = __atomic_exchange_n(&c->seen, value, __ATOMIC_RELAXED);
	if (value > seen)
		lgp_eng_recv_overhead(&c->dom->eng, value - seen);
	return value;
}

static uint64_t lgp_cntr_read(struct fid_cntr *cntr)
{
	struct lgp_cntr *c = lgp_cntr_of(cntr);

	return lgp_cntr_charge(c, fi_cntr_read(c->hcntr));
}

/* Releases what is due in an active domain; the lock is not held. */
static void lgp_cntr_release(struct lgp_cntr *c)
{
	uint64_t now = lgp_now_ns();

	if (lgp_eng_next_release(&c->dom->eng) > now)
		return;
	pthread_mutex_lock(&c->dom->lock);
	lgp_eng_release(&c->dom->eng, now);
	pthread_mutex_unlock(&c->dom->lock);
}

static uint64_t lgp_cntr_read_active(struct fid_cntr *cntr)
{
	struct lgp_cntr *c = lgp_cntr_of(cntr);

	lgp_cntr_release(c);
	return lgp_cntr_charge(c, fi_cntr_read(c->hcntr));
}

static uint64_t lgp_cntr_readerr(struct fid_cntr *cntr)
{
	return fi_cntr_readerr(lgp_cntr_of(cntr)->hcntr);
}

static int lgp_cntr_add(struct fid_cntr *cntr, uint64_t value)
{
	return fi_cntr_add(lgp_cntr_of(cntr)->hcntr, value);
}

static int lgp_cntr_set(struct fid_cntr *cntr, uint64_t value)
{
	struct lgp_cntr *c = lgp_cntr_of(cntr);

	__atomic_store_n(&c->seen, value, __ATOMIC_RELAXED);
	return fi_cntr_set(c->hcntr, value);
}

static int lgp_cntr_wait(struct fid_cntr *cntr, uint64_t threshold, int timeout)
{
	struct lgp_cntr *c = lgp_cntr_of(cntr);
	int ret;

	/* The rest is the progress thread's: the real wait blocks. */
	if (c->dom->active)
		lgp_cntr_release(c);
	ret = fi_cntr_wait(c->hcntr, threshold, timeout);

	if (!ret)
		lgp_cntr_charge(c, fi_cntr_read(c->hcntr));
	return ret;
}

static int lgp_cntr_adderr(struct fid_cntr *cntr, uint64_t value)
{
	return fi_cntr_adderr(lgp_cntr_of(cntr)->hcntr, value);
}

static int lgp_cntr_seterr(struct fid_cntr *cntr, uint64_t value)
{
	return fi_cntr_seterr(lgp_cntr_of(cntr)->hcntr, value);
}

/* The ops of a counter whose reads are read_fn. */
#define LGP_CNTR_OPS(read_fn) {						\
	.size = sizeof(struct fi_ops_cntr),				\
	.read = read_fn,						\
	.readerr = lgp_cntr_readerr,					\
	.add = lgp_cntr_add,						\
	.set = lgp_cntr_set,						\
	.wait = lgp_cntr_wait,						\
	.adderr = lgp_cntr_adderr,					\
	.seterr = lgp_cntr_seterr,					\
}

/* Pass-through (every knob zero), and while delays are on. */
static struct fi_ops_cntr lgp_cntr_ops = LGP_CNTR_OPS(lgp_cntr_read);
static struct fi_ops_cntr lgp_cntr_active_ops = LGP_CNTR_OPS(lgp_cntr_read_active);

int lgp_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		  struct fid_cntr **out, void *context)
{
	struct lgp_domain *dom = lgp_container_of(domain, struct lgp_domain, domain);
	struct fi_cntr_attr hattr = *attr;
	struct lgp_cntr *c;
	int ret;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -FI_ENOMEM;
	c->dom = dom;
	if (attr->wait_set)
		hattr.wait_set = (struct fid_wait *) lgp_fid_real(&attr->wait_set->fid);
	ret = fi_cntr_open(dom->hdomain, &hattr, &c->hcntr, context);
	if (ret) {
		free(c);
		return ret;
	}
	c->cntr.fid.fclass = FI_CLASS_CNTR;
	c->cntr.fid.context = context;
	c->cntr.fid.ops = &lgp_cntr_fi_ops;
	c->cntr.ops = dom->active ? &lgp_cntr_active_ops : &lgp_cntr_ops;
	*out = &c->cntr;
	return 0;
}

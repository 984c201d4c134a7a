/* SPDX-License-Identifier: MIT */
/*
 * Object life cycles: endpoints closed in every state (bound but not
 * enabled, after a failed fi_enable, with sends held, after fi_shutdown),
 * counters closed after held sends, and a refused connection's error
 * event.
 */
#include <string.h>

#include "conform.h"

#define CF_LIFE_MSGS	8
#define CF_LIFE_LEN	300

static const struct cf_pair_attr cf_rdm = { .type = FI_EP_RDM };

/* Bound to a CQ, counters and an AV, never enabled. */
static int cf_case_ep_close_not_enabled(const char *prov)
{
	const struct cf_pair_attr attr = { .type = FI_EP_RDM, .cntrs = true };
	struct cf_pair p;
	int ret;

	if ((ret = cf_pair_domain(&p, prov, &attr)) ||
	    (ret = cf_side_open(&p, &p.a, p.info)))
		return ret;
	return cf_pair_close(&p);
}

/*
 * fi_enable without a bound AV fails on an RDM endpoint; whatever it
 * returns, the endpoint and its CQ then close cleanly.
 */
static int cf_case_ep_enable_no_av(const char *prov)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA };
	struct cf_pair p;
	int ret;

	if ((ret = cf_pair_domain(&p, prov, &cf_rdm)))
		return ret;
	CF_OK(fi_cq_open(p.domain, &cq_attr, &p.a.cq, NULL));
	CF_OK(fi_endpoint(p.domain, p.info, &p.a.ep, NULL));
	CF_OK(fi_ep_bind(p.a.ep, &p.a.cq->fid, FI_TRANSMIT | FI_RECV));
	ret = fi_enable(p.a.ep);
	if (!ret)
		return cf_skip("fi_enable without an AV succeeds");
	return cf_pair_close(&p);
}

/*
 * A second endpoint that takes the name of an enabled one cannot enable
 * (shm: -FI_EBUSY); closing it must leave the first one working.
 */
static int cf_case_ep_enable_name_taken(const char *prov)
{
	struct cf_side c;
	struct cf_pair p;
	int ret;

	if ((ret = cf_pair_open(&p, prov, &cf_rdm)))
		return ret;
	memset(&c, 0, sizeof(c));
	if ((ret = cf_side_open(&p, &c, p.info)))
		return ret;
	ret = fi_setname(&c.ep->fid, p.a.addr, p.a.addrlen);
	if (ret)
		return cf_skip("fi_setname: %s", fi_strerror(-ret));
	ret = fi_enable(c.ep);
	if (!ret)
		return cf_skip("an endpoint may take an enabled one's name");
	if ((ret = cf_side_close(&c)))
		return ret;
	CF_OK(fi_recv(p.b.ep, p.b.buf, 64, p.b.desc, p.b.peer, &p.b));
	cf_fill(p.a.buf, 64, 51);
	CF_POST(&p, fi_send(p.a.ep, p.a.buf, 64, p.a.desc, p.a.peer, &p.a));
	if ((ret = cf_cq_wait(&p, p.a.cq, NULL, "send after the failed enable")) ||
	    (ret = cf_cq_wait(&p, p.b.cq, NULL, "receive after the failed enable")))
		return ret;
	CF_CHECK(cf_check(p.b.buf, 64, 51), "received bytes differ");
	return cf_pair_close(&p);
}

/*
 * The sender closes its endpoint (and its counters) as soon as its sends
 * completed: every message still reaches the receiver.
 */
static int cf_ep_close_held(const char *prov, const struct cf_pair_attr *attr)
{
	struct cf_pair p;
	int ret;

	if ((ret = cf_pair_open(&p, prov, attr)) ||
	    (ret = cf_burst_send(&p, &p.b, CF_LIFE_MSGS, CF_LIFE_LEN, 60)))
		return ret;
	CF_OK(fi_close(&p.a.ep->fid));
	p.a.ep = NULL;
	if (p.a.tx_cntr) {
		CF_OK(fi_close(&p.a.tx_cntr->fid));
		CF_OK(fi_close(&p.a.rx_cntr->fid));
		p.a.tx_cntr = p.a.rx_cntr = NULL;
	}
	if ((ret = cf_burst_recv(&p, &p.b, CF_LIFE_MSGS, CF_LIFE_LEN, 60)))
		return ret;
	return cf_pair_close(&p);
}

static int cf_case_ep_close_held_rdm(const char *prov)
{
	const struct cf_pair_attr attr = { .type = FI_EP_RDM, .cntrs = true };

	return cf_ep_close_held(prov, &attr);
}

static int cf_case_ep_close_held_msg(const char *prov)
{
	const struct cf_pair_attr attr = { .type = FI_EP_MSG, .cntrs = true };

	return cf_ep_close_held(prov, &attr);
}

/*
 * The receiver's endpoint closes first, while the sender still holds
 * sends to it: the sender's close ends promptly, whatever the provider
 * makes of sends to a peer that is gone (an error, not a 60 s wait).
 */
static int cf_case_ep_close_peer_gone(const char *prov)
{
	const struct cf_pair_attr attr = { .type = FI_EP_RDM };
	uint64_t start;
	struct cf_pair p;
	int ret;

	if ((ret = cf_pair_open(&p, prov, &attr)) ||
	    (ret = cf_burst_send(&p, &p.b, CF_LIFE_MSGS, CF_LIFE_LEN, 90)))
		return ret;
	CF_OK(fi_close(&p.b.ep->fid));
	p.b.ep = NULL;
	start = cf_now_ns();
	CF_OK(fi_close(&p.a.ep->fid));
	p.a.ep = NULL;
	CF_CHECK(cf_now_ns() - start < CF_WAIT_NS, "closing the sender took "
		 "%llu ms", (unsigned long long) ((cf_now_ns() - start) / 1000000));
	return cf_pair_close(&p);
}

/* fi_shutdown right after the sends completed loses none of them. */
static int cf_case_ep_shutdown_held(const char *prov)
{
	const struct cf_pair_attr attr = { .type = FI_EP_MSG };
	struct cf_pair p;
	int ret;

	if ((ret = cf_pair_open(&p, prov, &attr)) ||
	    (ret = cf_burst_send(&p, &p.b, CF_LIFE_MSGS, CF_LIFE_LEN, 70)))
		return ret;
	CF_OK(fi_shutdown(p.a.ep, 0));
	if ((ret = cf_burst_recv(&p, &p.b, CF_LIFE_MSGS, CF_LIFE_LEN, 70)))
		return ret;
	return cf_pair_close(&p);
}

/*
 * A connection to a port nobody listens on ends in an error event that
 * names the connecting endpoint as the application knows it.
 */
static int cf_case_msg_connect_refused(const char *prov)
{
	const struct cf_pair_attr attr = { .type = FI_EP_MSG };
	uint64_t deadline = cf_now_ns() + CF_WAIT_NS;
	struct fi_eq_err_entry err;
	struct fi_eq_cm_entry cm;
	struct fid_pep *gone;
	struct cf_pair p;
	char addr[128];
	size_t len = sizeof(addr);
	uint32_t event;
	ssize_t n;
	int ret;

	if ((ret = cf_pair_domain(&p, prov, &attr)))
		return ret;
	/* A port that was bound and is free again: nothing listens there. */
	CF_OK(fi_passive_ep(p.fabric, p.info, &gone, NULL));
	CF_OK(fi_getname(&gone->fid, addr, &len));
	CF_OK(fi_close(&gone->fid));
	if ((ret = cf_side_open(&p, &p.a, p.info)))
		return ret;
	CF_OK(fi_enable(p.a.ep));
	CF_OK(fi_connect(p.a.ep, addr, NULL, 0));
	while ((n = fi_eq_read(p.eq, &event, &cm, sizeof(cm), 0)) == -FI_EAGAIN)
		CF_CHECK(cf_now_ns() < deadline, "no event for a refused connect");
	CF_CHECK(n == -FI_EAVAIL, "a refused connect gave %s, not an error",
		 n > 0 ? fi_tostr(&event, FI_TYPE_EQ_EVENT) :
		 fi_strerror((int) -n));
	memset(&err, 0, sizeof(err));
	CF_CHECK(fi_eq_readerr(p.eq, &err, 0) > 0, "fi_eq_readerr failed");
	CF_CHECK(err.fid == &p.a.ep->fid, "the error names fid %p, not the "
		 "connecting endpoint %p", (void *) err.fid,
		 (void *) &p.a.ep->fid);
	CF_CHECK(err.err == FI_ECONNREFUSED, "the error is %s, expected %s",
		 fi_strerror(err.err), fi_strerror(FI_ECONNREFUSED));
	return cf_pair_close(&p);
}

const struct cf_case cf_life_cases[] = {
	{ "ep_close_not_enabled", cf_case_ep_close_not_enabled },
	{ "ep_enable_no_av", cf_case_ep_enable_no_av },
	{ "ep_enable_name_taken", cf_case_ep_enable_name_taken },
	{ "ep_close_held_rdm", cf_case_ep_close_held_rdm },
	{ "ep_close_held_msg", cf_case_ep_close_held_msg },
	{ "ep_close_peer_gone", cf_case_ep_close_peer_gone },
	{ "ep_shutdown_held", cf_case_ep_shutdown_held },
	{ "msg_connect_refused", cf_case_msg_connect_refused },
	{ NULL, NULL },
};

/* SPDX-License-Identifier: MIT */
/*
 * Address vectors with traffic in flight: an address removed while sends
 * to it may still be held (beneath the shim's delays they are), inserted
 * again and used; lookups of what was inserted.
 */
#include <string.h>

#include "conform.h"

#define CF_AV_MSGS	16
#define CF_AV_LEN	200

static const struct cf_pair_attr cf_rdm = { .type = FI_EP_RDM };

/*
 * The application saw every send to b complete, then removed b's address
 * and inserted c's, which may take the freed slot.  Over a network b's
 * messages had left: b must get them all and c none of them; the
 * provider must never be handed the removed address.  Then c's address
 * carries a second burst.
 */
static int cf_case_av_remove_inflight(const char *prov)
{
	struct cf_pair p;
	int ret;

	if ((ret = cf_pair_open(&p, prov, &cf_rdm)) ||
	    (ret = cf_side_open(&p, &p.c, p.info)) ||
	    (ret = cf_side_enable(&p, &p.c)))
		return ret;
	p.c.peer = FI_ADDR_UNSPEC;
	if ((ret = cf_burst_send(&p, &p.b, CF_AV_MSGS, CF_AV_LEN, 100)))
		return ret;
	CF_OK(fi_av_remove(p.a.av, &p.a.peer, 1, 0));
	CF_CHECK(fi_av_insert(p.a.av, p.c.addr, 1, &p.a.peer, 0, NULL) == 1,
		 "fi_av_insert after the removal failed");
	if ((ret = cf_burst_recv(&p, &p.b, CF_AV_MSGS, CF_AV_LEN, 100)) ||
	    (ret = cf_burst_send(&p, &p.c, CF_AV_MSGS, CF_AV_LEN, 200)) ||
	    (ret = cf_burst_recv(&p, &p.c, CF_AV_MSGS, CF_AV_LEN, 200)))
		return ret;
	return cf_pair_close(&p);
}

/* Closing the AV itself once the endpoint is gone, with sends held. */
static int cf_case_av_close_inflight(const char *prov)
{
	struct cf_pair p;
	int ret;

	if ((ret = cf_pair_open(&p, prov, &cf_rdm)) ||
	    (ret = cf_burst_send(&p, &p.b, CF_AV_MSGS, CF_AV_LEN, 300)))
		return ret;
	CF_OK(fi_close(&p.a.ep->fid));
	p.a.ep = NULL;
	CF_OK(fi_close(&p.a.av->fid));
	p.a.av = NULL;
	if ((ret = cf_burst_recv(&p, &p.b, CF_AV_MSGS, CF_AV_LEN, 300)))
		return ret;
	return cf_pair_close(&p);
}

/* What was inserted is what lookup returns; straddr names it. */
static int cf_case_av_lookup(const char *prov)
{
	char addr[256], str[256];
	size_t len = sizeof(addr), slen = sizeof(str);
	struct cf_pair p;
	int ret;

	if ((ret = cf_pair_open(&p, prov, &cf_rdm)))
		return ret;
	ret = fi_av_lookup(p.a.av, p.a.peer, addr, &len);
	if (ret == -FI_ENODATA)	/* rxd 1.17 keeps no inserted addresses */
		return cf_skip("fi_av_lookup of an inserted address: %s",
			       fi_strerror(-ret));
	CF_OK(ret);
	CF_CHECK(len == p.b.addrlen && !memcmp(addr, p.b.addr, len),
		 "fi_av_lookup returned another address (%zu bytes, inserted "
		 "%zu)", len, p.b.addrlen);
	CF_CHECK(fi_av_straddr(p.a.av, addr, str, &slen) && str[0],
		 "fi_av_straddr gave nothing");
	return cf_pair_close(&p);
}

const struct cf_case cf_av_cases[] = {
	{ "av_remove_inflight", cf_case_av_remove_inflight },
	{ "av_close_inflight", cf_case_av_close_inflight },
	{ "av_lookup", cf_case_av_lookup },
	{ NULL, NULL },
};

/* SPDX-License-Identifier: MIT */
/*
 * Two endpoints of one process joined as a program would join them: by
 * address vectors (RDM) or by a passive endpoint's accept (MSG).
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conform.h"

static bool cf_prov_is_shm(const char *prov)
{
	return !strncmp(prov, "shm", 3);
}

struct fi_info *cf_hints(const char *prov, const struct cf_pair_attr *attr)
{
	struct fi_info *hints = fi_allocinfo();

	if (!hints)
		return NULL;
	hints->caps = FI_MSG | attr->caps;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->ep_attr->type = attr->type;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->fabric_attr->prov_name = strdup(prov);
	if (!cf_prov_is_shm(prov))
		hints->addr_format = FI_SOCKADDR_IN;
	return hints;
}

int cf_pair_domain(struct cf_pair *p, const char *prov,
		   const struct cf_pair_attr *attr)
{
	struct fi_info *hints = cf_hints(prov, attr);
	const char *node = cf_prov_is_shm(prov) ? NULL : "127.0.0.1";
	int ret;

	memset(p, 0, sizeof(*p));
	p->attr = *attr;
	if (!p->attr.format)
		p->attr.format = FI_CQ_FORMAT_DATA;
	CF_CHECK(hints, "fi_allocinfo failed");
	ret = fi_getinfo(FI_VERSION(1, 17), node, node ? "0" : NULL,
			 node ? FI_SOURCE : 0, hints, &p->info);
	fi_freeinfo(hints);
	if (ret == -FI_ENODATA)
		return cf_skip("%s has no %s endpoint with caps 0x%llx", prov,
			       fi_tostr(&attr->type, FI_TYPE_EP_TYPE),
			       (unsigned long long) attr->caps);
	CF_OK(ret);
	CF_OK(fi_fabric(p->info->fabric_attr, &p->fabric, NULL));
	CF_OK(fi_domain(p->fabric, p->info, &p->domain, NULL));
	if (attr->type == FI_EP_MSG) {
		struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };

		CF_OK(fi_eq_open(p->fabric, &eq_attr, &p->eq, NULL));
	}
	return 0;
}

/* Registers s->buf when the provider or the pair's caps need it. */
static int cf_side_mr(struct cf_pair *p, struct cf_side *s, uint64_t key)
{
	uint64_t access = FI_SEND | FI_RECV;

	if (p->attr.caps & (FI_RMA | FI_ATOMIC))
		access |= FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
	else if (!(p->info->domain_attr->mr_mode & FI_MR_LOCAL))
		return 0;
	CF_OK(fi_mr_reg(p->domain, s->buf, sizeof(s->buf), access, 0, key, 0,
			&s->mr, NULL));
	s->desc = fi_mr_desc(s->mr);
	return 0;
}

int cf_side_open(struct cf_pair *p, struct cf_side *s, struct fi_info *info)
{
	struct fi_cq_attr cq_attr = {
		.format = p->attr.format,
		.wait_obj = p->attr.wait_obj,
		.wait_set = p->attr.wait_set,
		.size = 128,
	};
	int ret;

	CF_OK(fi_cq_open(p->domain, &cq_attr, &s->cq, s));
	CF_OK(fi_endpoint(p->domain, info, &s->ep, s));
	CF_OK(fi_ep_bind(s->ep, &s->cq->fid, FI_TRANSMIT | FI_RECV |
			 p->attr.cq_flags));
	if (p->attr.cntrs) {
		struct fi_cntr_attr cntr_attr = { .events = FI_CNTR_EVENTS_COMP,
						  .wait_obj = FI_WAIT_UNSPEC };

		/* Contexts of their own: a poll set tells them apart. */
		CF_OK(fi_cntr_open(p->domain, &cntr_attr, &s->tx_cntr,
				   &s->tx_cntr));
		CF_OK(fi_cntr_open(p->domain, &cntr_attr, &s->rx_cntr,
				   &s->rx_cntr));
		CF_OK(fi_ep_bind(s->ep, &s->tx_cntr->fid, FI_SEND | FI_WRITE |
				 FI_READ));
		CF_OK(fi_ep_bind(s->ep, &s->rx_cntr->fid, FI_RECV));
	}
	if (p->attr.rma_cntr) {
		struct fi_cntr_attr cntr_attr = { .events = FI_CNTR_EVENTS_COMP,
						  .wait_obj = FI_WAIT_UNSPEC };

		CF_OK(fi_cntr_open(p->domain, &cntr_attr, &s->rma_cntr,
				   &s->rma_cntr));
		CF_OK(fi_ep_bind(s->ep, &s->rma_cntr->fid, FI_REMOTE_WRITE));
	}
	if (p->attr.type == FI_EP_MSG) {
		CF_OK(fi_ep_bind(s->ep, &p->eq->fid, 0));
	} else {
		struct fi_av_attr av_attr = { .type = FI_AV_MAP };

		CF_OK(fi_av_open(p->domain, &av_attr, &s->av, s));
		CF_OK(fi_ep_bind(s->ep, &s->av->fid, 0));
	}
	if (cf_prov_is_shm(p->info->fabric_attr->prov_name)) {
		/*
		 * shm names an endpoint's region after its pid: a region a
		 * killed process left in /dev/shm makes a later process of
		 * the same pid fail fi_enable with -FI_EBUSY.
		 */
		char name[64];

		snprintf(name, sizeof(name), "cf-%d-%llx", (int) getpid(),
			 (unsigned long long) cf_now_ns());
		CF_OK(fi_setname(&s->ep->fid, name, strlen(name) + 1));
	}
	ret = cf_side_mr(p, s, s == &p->a ? 1 : 2);
	return ret;
}

int cf_side_enable(struct cf_pair *p, struct cf_side *s)
{
	CF_OK(fi_enable(s->ep));
	s->addrlen = sizeof(s->addr);
	CF_OK(fi_getname(&s->ep->fid, s->addr, &s->addrlen));
	return 0;
}

/* Reads the EQ until event comes for fid; other events are failures. */
static int cf_eq_expect(struct cf_pair *p, uint32_t want, struct fid *fid,
			struct fi_eq_cm_entry *cm)
{
	uint64_t deadline = cf_now_ns() + CF_WAIT_NS;
	struct fi_eq_err_entry err;
	uint32_t event;
	ssize_t n;

	for (;;) {
		n = fi_eq_read(p->eq, &event, cm, sizeof(*cm), 0);
		if (n == -FI_EAVAIL) {
			memset(&err, 0, sizeof(err));
			fi_eq_readerr(p->eq, &err, 0);
			return cf_why("EQ error waiting for %s: %s",
				      fi_tostr(&want, FI_TYPE_EQ_EVENT),
				      fi_strerror(err.err));
		}
		if (n > 0)
			break;
		CF_CHECK(n == -FI_EAGAIN, "fi_eq_read: %s", fi_strerror((int) -n));
		CF_CHECK(cf_now_ns() < deadline, "no %s event within %llu s",
			 fi_tostr(&want, FI_TYPE_EQ_EVENT),
			 CF_WAIT_NS / 1000000000ULL);
		sched_yield();
	}
	CF_CHECK(event == want, "EQ event %s, expected %s",
		 fi_tostr(&event, FI_TYPE_EQ_EVENT),
		 fi_tostr(&want, FI_TYPE_EQ_EVENT));
	CF_CHECK(cm->fid == fid, "EQ event %s names fid %p, not the %s %p",
		 fi_tostr(&event, FI_TYPE_EQ_EVENT), (void *) cm->fid,
		 want == FI_CONNREQ ? "passive endpoint" : "endpoint",
		 (void *) fid);
	return 0;
}

/*
 * b is the endpoint made from the connection request's info, whose
 * handle is the provider's record of the accepted connection.
 */
static int cf_pair_connect(struct cf_pair *p)
{
	struct fi_eq_cm_entry cm;
	char paddr[256];
	size_t plen = sizeof(paddr);
	int ret;

	CF_OK(fi_passive_ep(p->fabric, p->info, &p->pep, p));
	CF_OK(fi_pep_bind(p->pep, &p->eq->fid, 0));
	CF_OK(fi_listen(p->pep));
	CF_OK(fi_getname(&p->pep->fid, paddr, &plen));
	if ((ret = cf_side_open(p, &p->a, p->info)))
		return ret;
	CF_OK(fi_enable(p->a.ep));
	CF_OK(fi_connect(p->a.ep, paddr, NULL, 0));
	if ((ret = cf_eq_expect(p, FI_CONNREQ, &p->pep->fid, &cm)))
		return ret;
	CF_CHECK(cm.info && cm.info->handle, "FI_CONNREQ without info->handle");
	ret = cf_side_open(p, &p->b, cm.info);
	fi_freeinfo(cm.info);
	if (ret)
		return ret;
	CF_OK(fi_enable(p->b.ep));
	CF_OK(fi_accept(p->b.ep, NULL, 0));
	if ((ret = cf_eq_expect(p, FI_CONNECTED, &p->b.ep->fid, &cm)))
		return ret;
	if ((ret = cf_eq_expect(p, FI_CONNECTED, &p->a.ep->fid, &cm)))
		return ret;
	p->a.addrlen = sizeof(p->a.addr);
	CF_OK(fi_getname(&p->a.ep->fid, p->a.addr, &p->a.addrlen));
	p->b.addrlen = sizeof(p->b.addr);
	CF_OK(fi_getname(&p->b.ep->fid, p->b.addr, &p->b.addrlen));
	return 0;
}

static int cf_pair_av(struct cf_pair *p)
{
	int ret;

	if ((ret = cf_side_open(p, &p->a, p->info)) ||
	    (ret = cf_side_open(p, &p->b, p->info)) ||
	    (ret = cf_side_enable(p, &p->a)) ||
	    (ret = cf_side_enable(p, &p->b)))
		return ret;
	CF_CHECK(fi_av_insert(p->a.av, p->b.addr, 1, &p->a.peer, 0, NULL) == 1,
		 "fi_av_insert of b's address failed");
	CF_CHECK(fi_av_insert(p->b.av, p->a.addr, 1, &p->b.peer, 0, NULL) == 1,
		 "fi_av_insert of a's address failed");
	return 0;
}

static void cf_side_keys(struct cf_pair *p, struct cf_side *s,
			 struct cf_side *peer)
{
	if (!peer->mr)
		return;
	s->key = fi_mr_key(peer->mr);
	s->raddr = p->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR ?
		   (uint64_t) (uintptr_t) peer->buf : 0;
}

int cf_pair_open(struct cf_pair *p, const char *prov,
		 const struct cf_pair_attr *attr)
{
	int ret = cf_pair_domain(p, prov, attr);

	if (ret)
		return ret;
	ret = attr->type == FI_EP_MSG ? cf_pair_connect(p) : cf_pair_av(p);
	if (ret)
		return ret;
	cf_side_keys(p, &p->a, &p->b);
	cf_side_keys(p, &p->b, &p->a);
	return 0;
}

void *cf_remote(const struct cf_pair *p, const struct cf_side *s)
{
	return (void *) (uintptr_t) s->raddr;
}

int cf_side_close(struct cf_side *s)
{
	struct fid *fids[] = {
		s->ep ? &s->ep->fid : NULL, s->mr ? &s->mr->fid : NULL,
		s->av ? &s->av->fid : NULL, s->cq ? &s->cq->fid : NULL,
		s->tx_cntr ? &s->tx_cntr->fid : NULL,
		s->rx_cntr ? &s->rx_cntr->fid : NULL,
		s->rma_cntr ? &s->rma_cntr->fid : NULL,
	};
	size_t i;

	for (i = 0; i < sizeof(fids) / sizeof(fids[0]); i++)
		if (fids[i])
			CF_OK(fi_close(fids[i]));
	memset(s, 0, sizeof(*s));
	return 0;
}

int cf_pair_close(struct cf_pair *p)
{
	int ret;

	if ((ret = cf_side_close(&p->a)) || (ret = cf_side_close(&p->b)) ||
	    (ret = cf_side_close(&p->c)))
		return ret;
	if (p->pep)
		CF_OK(fi_close(&p->pep->fid));
	if (p->eq)
		CF_OK(fi_close(&p->eq->fid));
	if (p->domain)
		CF_OK(fi_close(&p->domain->fid));
	if (p->fabric)
		CF_OK(fi_close(&p->fabric->fid));
	fi_freeinfo(p->info);
	memset(p, 0, sizeof(*p));
	return 0;
}

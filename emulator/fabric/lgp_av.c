/* SPDX-License-Identifier: MIT */
/*
 * Address vector wrapper.  fi_addr_t values are the real provider's and
 * pass through unchanged; the object is wrapped so that binds to wrapped
 * endpoints can be translated, and so that removing an address waits for
 * the sends the shim still holds for the endpoints using this AV.  With a
 * topology it also keeps, per destination address, the rank it belongs to
 * (lgp_topo.h), forgotten when an address is removed.
 */
#include <stdlib.h>
#include <string.h>

#include "lgp_av.h"
#include "lgp_domain.h"
#include "lgp_ep.h"
#include "lgp_fid.h"

static struct fid_av *lgp_hav(struct fid_av *av)
{
	return lgp_container_of(av, struct lgp_av, av)->hav;
}

static int lgp_av_close(struct fid *fid)
{
	struct lgp_av *av = lgp_container_of(fid, struct lgp_av, av.fid);
	struct lgp_ep *ep;
	int ret;

	ret = fi_close(&av->hav->fid);
	if (ret)
		return ret;
	pthread_mutex_lock(&av->dom->lock);
	for (ep = av->dom->eps; ep; ep = ep->next_in_dom)
		if (ep->av == av)
			ep->av = NULL;
	pthread_mutex_unlock(&av->dom->lock);
	lgp_fid_unregister(&av->hav->fid);
	free(av->dests);
	free(av);
	return 0;
}

struct fi_ops lgp_av_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lgp_av_close,
	.bind = lgp_fid_bind,
	.control = lgp_fid_control,
	.ops_open = lgp_fid_ops_open,
	.tostr = lgp_fid_tostr,
	.ops_set = lgp_fid_ops_set,
};

static size_t lgp_av_slot(fi_addr_t addr, size_t cap)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ULL) >> 32) & (cap - 1);
}

/* Rehashes into twice the room: at most half the slots are used. */
static int lgp_av_grow(struct lgp_av *av)
{
	size_t cap = av->cap ? 2 * av->cap : 64, i, j;
	struct lgp_av_dest *d = calloc(cap, sizeof(*d));

	if (!d)
		return -FI_ENOMEM;
	for (i = 0; i < av->cap; i++) {
		if (!av->dests[i].used)
			continue;
		for (j = lgp_av_slot(av->dests[i].addr, cap); d[j].used; j = (j + 1) & (cap - 1))
			;
		d[j] = av->dests[i];
	}
	free(av->dests);
	av->dests = d;
	av->cap = cap;
	return 0;
}

struct lgp_topo_dest *lgp_av_dest(struct lgp_av *av, fi_addr_t addr)
{
	size_t i;

	if (2 * (av->ndests + 1) > av->cap && lgp_av_grow(av))
		return NULL;
	for (i = lgp_av_slot(addr, av->cap); av->dests[i].used; i = (i + 1) & (av->cap - 1))
		if (av->dests[i].addr == addr)
			return &av->dests[i].dest;
	av->dests[i] = (struct lgp_av_dest) {
		.addr = addr, .used = true, .dest = { .rank = LGP_TOPO_UNKNOWN },
	};
	av->ndests++;
	return &av->dests[i].dest;
}

static int lgp_av_insert(struct fid_av *av, const void *addr, size_t count,
			 fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	return fi_av_insert(lgp_hav(av), addr, count, fi_addr, flags, context);
}

static int lgp_av_insertsvc(struct fid_av *av, const char *node,
			    const char *service, fi_addr_t *fi_addr,
			    uint64_t flags, void *context)
{
	return fi_av_insertsvc(lgp_hav(av), node, service, fi_addr, flags, context);
}

static int lgp_av_insertsym(struct fid_av *av, const char *node, size_t nodecnt,
			    const char *service, size_t svccnt,
			    fi_addr_t *fi_addr, uint64_t flags, void *context)
{
	return fi_av_insertsym(lgp_hav(av), node, nodecnt, service, svccnt,
			       fi_addr, flags, context);
}

/*
 * A send held in the delay queue must not be posted to an address that is
 * gone (the provider would follow a stale entry: shm crashes).  The
 * application saw those sends complete before it removed the address, as
 * it would have over a real network where they had left, so they are sent
 * first: each at its release time, the call returning once the provider
 * has completed them.  The domain lock is held throughout (it is
 * recursive), so no endpoint leaves the list meanwhile.
 */
static int lgp_av_remove(struct fid_av *fav, fi_addr_t *fi_addr, size_t count,
			 uint64_t flags)
{
	struct lgp_av *av = lgp_container_of(fav, struct lgp_av, av);
	struct lgp_ep *ep;

	if (av->dom->active) {
		pthread_mutex_lock(&av->dom->lock);
		for (ep = av->dom->eps; ep; ep = ep->next_in_dom)
			if (ep->av == av)
				lgp_ep_flush(ep);
		/* A removed address may come back as another peer's: ask again. */
		if (av->cap)
			memset(av->dests, 0, av->cap * sizeof(*av->dests));
		av->ndests = 0;
		pthread_mutex_unlock(&av->dom->lock);
	}
	return fi_av_remove(av->hav, fi_addr, count, flags);
}

static int lgp_av_lookup(struct fid_av *av, fi_addr_t fi_addr, void *addr,
			 size_t *addrlen)
{
	return fi_av_lookup(lgp_hav(av), fi_addr, addr, addrlen);
}

static const char *lgp_av_straddr(struct fid_av *av, const void *addr,
				  char *buf, size_t *len)
{
	return fi_av_straddr(lgp_hav(av), addr, buf, len);
}

static int lgp_av_set(struct fid_av *av, struct fi_av_set_attr *attr,
		      struct fid_av_set **av_set, void *context)
{
	struct fid_av *hav = lgp_hav(av);

	if (!FI_CHECK_OP(hav->ops, struct fi_ops_av, av_set))
		return -FI_ENOSYS;
	return hav->ops->av_set(hav, attr, av_set, context);
}

static struct fi_ops_av lgp_av_ops = {
	.size = sizeof(struct fi_ops_av),
	.insert = lgp_av_insert,
	.insertsvc = lgp_av_insertsvc,
	.insertsym = lgp_av_insertsym,
	.remove = lgp_av_remove,
	.lookup = lgp_av_lookup,
	.straddr = lgp_av_straddr,
	.av_set = lgp_av_set,
};

int lgp_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		struct fid_av **out, void *context)
{
	struct lgp_domain *dom = lgp_container_of(domain, struct lgp_domain, domain);
	struct lgp_av *av;
	int ret;

	av = calloc(1, sizeof(*av));
	if (!av)
		return -FI_ENOMEM;
	ret = fi_av_open(dom->hdomain, attr, &av->hav, context);
	if (ret) {
		free(av);
		return ret;
	}
	av->dom = dom;
	lgp_fid_register(&av->av.fid, &av->hav->fid);
	av->av.fid.fclass = FI_CLASS_AV;
	av->av.fid.context = context;
	av->av.fid.ops = &lgp_av_fi_ops;
	av->av.ops = &lgp_av_ops;
	*out = &av->av;
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * Provider-specific interfaces (fi_open_ops) that take fids.
 *
 * fi_open_ops() hands back a table of functions of the real provider; any
 * of them that takes a fid would receive our wrapper and misread it.
 * libfabric's own utility providers ask their core provider for such
 * tables, named "ofix_*".  The one that matters, rxm's credit-based flow
 * control over tcp, is wrapped here (its layout is libfabric's internal
 * "ofix_flow_ctrl_v1" ABI, stable within the 1.x series); the other ofix_
 * tables are refused with -FI_ENOSYS, which their users treat as "not
 * offered" and fall back from.  Any other name is forwarded unchanged.
 */
#include <string.h>

#include "lgp_domain.h"
#include "lgp_ep.h"
#include "lgp_fid.h"

#define LGP_OPS_FLOW_CTRL	"ofix_flow_ctrl_v1"
#define LGP_OPS_PRIVATE_PREFIX	"ofix_"

struct lgp_ops_flow_ctrl {
	size_t size;
	bool (*available)(struct fid_ep *ep);
	int (*enable)(struct fid_ep *ep, uint64_t threshold);
	void (*add_credits)(struct fid_ep *ep, uint64_t credits);
	void (*set_send_handler)(struct fid_domain *domain,
				 ssize_t (*send_handler)(struct fid_ep *ep,
							 uint64_t credits));
};

static struct lgp_ep *lgp_ops_ep(struct fid_ep *ep)
{
	return lgp_container_of(ep, struct lgp_ep, ep);
}

static const struct lgp_ops_flow_ctrl *lgp_ops_base(struct lgp_ep *ep)
{
	return ep->dom->base_flow_ctrl;
}

static bool lgp_flow_available(struct fid_ep *fep)
{
	struct lgp_ep *ep = lgp_ops_ep(fep);

	return lgp_ops_base(ep)->available(ep->hep);
}

static int lgp_flow_enable(struct fid_ep *fep, uint64_t threshold)
{
	struct lgp_ep *ep = lgp_ops_ep(fep);

	return lgp_ops_base(ep)->enable(ep->hep, threshold);
}

static void lgp_flow_add_credits(struct fid_ep *fep, uint64_t credits)
{
	struct lgp_ep *ep = lgp_ops_ep(fep);

	lgp_ops_base(ep)->add_credits(ep->hep, credits);
}

/* The core calls back with its own endpoint: hand the utility ours. */
static ssize_t lgp_flow_send_handler(struct fid_ep *hep, uint64_t credits)
{
	struct fid *w = lgp_fid_from_real(&hep->fid);
	struct lgp_ep *ep;

	if (w == &hep->fid)
		return -FI_EINVAL;
	ep = lgp_container_of(w, struct lgp_ep, ep.fid);
	return ep->dom->credit_handler(&ep->ep, credits);
}

static void lgp_flow_set_send_handler(struct fid_domain *domain,
				      ssize_t (*handler)(struct fid_ep *ep,
							 uint64_t credits))
{
	struct lgp_domain *dom = lgp_container_of(domain, struct lgp_domain, domain);

	dom->credit_handler = handler;
	dom->base_flow_ctrl->set_send_handler(dom->hdomain, lgp_flow_send_handler);
}

static struct lgp_ops_flow_ctrl lgp_flow_ctrl_ops = {
	.size = sizeof(struct lgp_ops_flow_ctrl),
	.available = lgp_flow_available,
	.enable = lgp_flow_enable,
	.add_credits = lgp_flow_add_credits,
	.set_send_handler = lgp_flow_set_send_handler,
};

int lgp_domain_ops_open(struct fid *fid, const char *name, uint64_t flags,
			void **ops, void *context)
{
	struct lgp_domain *dom = lgp_container_of(fid, struct lgp_domain, domain.fid);
	int ret;

	if (strcmp(name, LGP_OPS_FLOW_CTRL))
		return lgp_fid_ops_open(fid, name, flags, ops, context);
	ret = fi_open_ops(&dom->hdomain->fid, name, flags,
			  (void **) &dom->base_flow_ctrl, context);
	if (ret)
		return ret;
	*ops = &lgp_flow_ctrl_ops;
	return 0;
}

int lgp_fid_ops_open(struct fid *fid, const char *name, uint64_t flags,
		     void **ops, void *context)
{
	if (!strncmp(name, LGP_OPS_PRIVATE_PREFIX, strlen(LGP_OPS_PRIVATE_PREFIX)))
		return -FI_ENOSYS;
	return fi_open_ops(lgp_fid_real(fid), name, flags, ops, context);
}

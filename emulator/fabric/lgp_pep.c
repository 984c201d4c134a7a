/* SPDX-License-Identifier: MIT */
/*
 * Passive endpoint wrapper: listens for connections of msg endpoints.
 * Connection requests arrive on the (wrapped) event queue.
 */
#include <stdlib.h>

#include "lgp_config.h"
#include "lgp_ep.h"
#include "lgp_fabric.h"
#include "lgp_fid.h"
#include "lgp_pep.h"

static int lgp_pep_close(struct fid *fid)
{
	struct lgp_pep *pep = lgp_container_of(fid, struct lgp_pep, pep.fid);
	int ret;

	ret = fi_close(&pep->hpep->fid);
	if (ret)
		return ret;
	lgp_fid_unregister(&pep->hpep->fid);
	free(pep);
	return 0;
}

struct fi_ops lgp_pep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = lgp_pep_close,
	.bind = lgp_fid_bind,
	.control = lgp_fid_control,
	.ops_open = lgp_fid_ops_open,
	.tostr = lgp_fid_tostr,
	.ops_set = lgp_fid_ops_set,
};

static int lgp_pep_getopt(fid_t fid, int level, int optname, void *optval,
			  size_t *optlen)
{
	return fi_getopt(lgp_fid_real(fid), level, optname, optval, optlen);
}

static int lgp_pep_setopt(fid_t fid, int level, int optname,
			  const void *optval, size_t optlen)
{
	return fi_setopt(lgp_fid_real(fid), level, optname, optval, optlen);
}

static ssize_t lgp_pep_cancel(fid_t fid, void *context)
{
	return -FI_ENOSYS;
}

static int lgp_pep_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
			  struct fid_ep **tx_ep, void *context)
{
	return -FI_ENOSYS;
}

static int lgp_pep_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
			  struct fid_ep **rx_ep, void *context)
{
	return -FI_ENOSYS;
}

static ssize_t lgp_pep_size_left(struct fid_ep *ep)
{
	return -FI_ENOSYS;
}

static struct fi_ops_ep lgp_pep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = lgp_pep_cancel,
	.getopt = lgp_pep_getopt,
	.setopt = lgp_pep_setopt,
	.tx_ctx = lgp_pep_tx_ctx,
	.rx_ctx = lgp_pep_rx_ctx,
	.rx_size_left = lgp_pep_size_left,
	.tx_size_left = lgp_pep_size_left,
};

int lgp_pep_open(struct lgp_fabric *fab, struct fi_info *info,
		 struct fid_pep **out, void *context)
{
	struct lgp_info_copy copy;
	struct lgp_pep *pep;
	int ret;

	if (lgp_config_get()->error)
		return -FI_EINVAL;
	pep = calloc(1, sizeof(*pep));
	if (!pep)
		return -FI_ENOMEM;
	ret = fi_passive_ep(fab->hfabric, lgp_info_real(info, &copy), &pep->hpep,
			    context);
	if (ret) {
		free(pep);
		return ret;
	}
	lgp_fid_register(&pep->pep.fid, &pep->hpep->fid);
	pep->pep.fid.fclass = FI_CLASS_PEP;
	pep->pep.fid.context = context;
	pep->pep.fid.ops = &lgp_pep_fi_ops;
	pep->pep.ops = &lgp_pep_ops;
	pep->pep.cm = &lgp_cm_ops;
	*out = &pep->pep;
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * Address vector wrapper (lgp_av.c): a removal first sends what the
 * shim holds for the endpoints bound to the AV.
 */
#ifndef LGP_AV_H
#define LGP_AV_H

#include <rdma/fi_domain.h>

struct lgp_domain;

struct lgp_av {
	struct fid_av av;
	struct fid_av *hav;
	struct lgp_domain *dom;
};

extern struct fi_ops lgp_av_fi_ops;

int lgp_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		struct fid_av **av, void *context);

#endif /* LGP_AV_H */

/* SPDX-License-Identifier: MIT */
/*
 * Counter wrapper (lgp_cntr.c).  A counter bound to count receives
 * charges o_r for every completion it newly reports.
 */
#ifndef LGP_CNTR_H
#define LGP_CNTR_H

#include <stdbool.h>
#include <stdint.h>

#include <rdma/fi_domain.h>

struct lgp_domain;

struct lgp_cntr {
	struct fid_cntr cntr;
	struct fid_cntr *hcntr;
	struct lgp_domain *dom;
	bool counts_recv;	/* bound to an endpoint for FI_RECV */
	uint64_t seen;		/* value last handed to the application */
};

extern struct fi_ops lgp_cntr_fi_ops;

int lgp_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr,
		  struct fid_cntr **cntr, void *context);

#endif /* LGP_CNTR_H */

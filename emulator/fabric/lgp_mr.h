/* SPDX-License-Identifier: MIT */
/* Memory region wrapper (lgp_mr.c), and a domain's fi_ops_mr. */
#ifndef LGP_MR_H
#define LGP_MR_H

#include <rdma/fi_domain.h>

struct lgp_domain;

struct lgp_mr {
	struct fid_mr mr;
	struct fid_mr *hmr;
};

extern struct fi_ops lgp_mr_fi_ops;
extern struct fi_ops_mr lgp_mr_ops;

int lgp_mr_wrap(struct lgp_domain *dom, struct fid_mr *hmr, void *context,
		struct fid_mr **mr);

#endif /* LGP_MR_H */

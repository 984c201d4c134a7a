/* SPDX-License-Identifier: MIT */
/*
 * Event queue wrapper (lgp_eq.c): events that name a real fid are handed
 * to the application with the wrapper it knows.
 */
#ifndef LGP_EQ_H
#define LGP_EQ_H

#include <rdma/fi_eq.h>

struct lgp_fabric;

struct lgp_eq {
	struct fid_eq eq;
	struct fid_eq *heq;
};

extern struct fi_ops lgp_eq_fi_ops;

int lgp_eq_open(struct lgp_fabric *fab, struct fi_eq_attr *attr,
		struct fid_eq **eq, void *context);

#endif /* LGP_EQ_H */

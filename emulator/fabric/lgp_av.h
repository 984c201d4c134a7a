/* SPDX-License-Identifier: MIT */
/*
 * Address vector wrapper (lgp_av.c): a removal first sends what the
 * shim holds for the endpoints bound to the AV.
 */
#ifndef LGP_AV_H
#define LGP_AV_H

#include <rdma/fi_domain.h>

#include "lgp_topo.h"

struct lgp_domain;

/* A destination address and what the topology knows of it. */
struct lgp_av_dest {
	fi_addr_t addr;
	bool used;
	struct lgp_topo_dest dest;
};

struct lgp_av {
	struct fid_av av;
	struct fid_av *hav;
	struct lgp_domain *dom;
	/* With a topology: destinations by address, open addressing; domain lock. */
	struct lgp_av_dest *dests;
	size_t ndests, cap;
};

extern struct fi_ops lgp_av_fi_ops;

/*
 * The topology's state of a destination address, added unknown if new;
 * NULL without memory.  Domain lock held.
 */
struct lgp_topo_dest *lgp_av_dest(struct lgp_av *av, fi_addr_t addr);

int lgp_av_open(struct fid_domain *domain, struct fi_av_attr *attr,
		struct fid_av **av, void *context);

#endif /* LGP_AV_H */

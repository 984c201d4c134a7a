/* SPDX-License-Identifier: MIT */
/* Passive endpoint wrapper (lgp_pep.c): listens, hands out connections. */
#ifndef LGP_PEP_H
#define LGP_PEP_H

#include <rdma/fi_endpoint.h>

struct lgp_fabric;

struct lgp_pep {
	struct fid_pep pep;
	struct fid_pep *hpep;
};

extern struct fi_ops lgp_pep_fi_ops;

int lgp_pep_open(struct lgp_fabric *fab, struct fi_info *info,
		 struct fid_pep **pep, void *context);

#endif /* LGP_PEP_H */

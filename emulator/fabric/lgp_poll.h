/* SPDX-License-Identifier: MIT */
/*
 * Poll set wrapper (lgp_poll.c): the shim decides itself when a CQ whose
 * completions it synthesises is reported (the application's read would
 * return something); other members are the real poll set's.
 */
#ifndef LGP_POLL_H
#define LGP_POLL_H

#include <pthread.h>
#include <stddef.h>

#include <rdma/fi_domain.h>

struct lgp_cq;

/*
 * Members of a poll or wait set whose completions the shim synthesises,
 * and fids of one fi_trywait, the shim translates at most.
 */
#define LGP_SET_MAX	64

struct lgp_poll {
	struct fid_poll poll;
	struct fid_poll *hpoll;
	pthread_mutex_t lock;
	struct lgp_cq *cqs[LGP_SET_MAX];	/* not in hpoll */
	size_t ncqs;
};

extern struct fi_ops lgp_poll_fi_ops;

int lgp_poll_open(struct fid_domain *domain, struct fi_poll_attr *attr,
		  struct fid_poll **pollset);

#endif /* LGP_POLL_H */

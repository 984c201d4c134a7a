/* SPDX-License-Identifier: MIT */
/*
 * Wait set wrapper (lgp_wait.c): fi_wait also returns for CQs whose
 * synthesised completions are due.
 */
#ifndef LGP_WAIT_H
#define LGP_WAIT_H

#include <pthread.h>
#include <stdbool.h>

#include <rdma/fi_eq.h>

struct lgp_cq;
struct lgp_fabric;

struct lgp_wait {
	struct fid_wait wait;
	struct fid_wait *hwait;
	pthread_mutex_t lock;
	struct lgp_cq *cqs;	/* CQs opened on this wait set */
};

extern struct fi_ops lgp_wait_fi_ops;

int lgp_wait_open(struct lgp_fabric *fab, struct fi_wait_attr *attr,
		  struct fid_wait **waitset);
void lgp_wait_add_cq(struct lgp_wait *w, struct lgp_cq *cq);
void lgp_wait_del_cq(struct lgp_wait *w, struct lgp_cq *cq);
/* Whether a member CQ holds a due synthesised completion. */
bool lgp_wait_set_ready(struct lgp_wait *w);

#endif /* LGP_WAIT_H */

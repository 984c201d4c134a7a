/* SPDX-License-Identifier: MIT */
/*
 * Domain wrapper (lgp_domain.c): owns the delay engine of the operations
 * its endpoints defer, and the lock that serialises them with the
 * application's calls.
 */
#ifndef LGP_DOMAIN_H
#define LGP_DOMAIN_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <rdma/fi_domain.h>

#include "lgp_engine.h"

struct lgp_cq;
struct lgp_ep;
struct lgp_fabric;
struct lgp_ops_flow_ctrl;
struct lgp_topo;

struct lgp_domain {
	struct fid_domain domain;
	struct fid_domain *hdomain;
	struct lgp_fabric *fab;
	bool active;
	/*
	 * Serialises the shim's state and every data-path call into the real
	 * domain while delays are active, so the progress thread may post
	 * into providers whose threading model is FI_THREAD_DOMAIN.
	 * Recursive: a core provider may call back into the utility above it
	 * (rxm's credit handler) from inside a call the shim made.
	 */
	pthread_mutex_t lock;
	struct lgp_engine eng;		/* knobs, deferred operations */
	const struct lgp_topo *topo;	/* latency per destination, or NULL */
	struct lgp_pacer *paths;	/* [ranks]: g and G towards each, or NULL */
	size_t inflight;		/* shim posts awaiting real completion */
	struct lgp_cq *cqs;		/* this domain's CQs */
	struct lgp_ep *eps;		/* this domain's endpoints */
	uint64_t next_signal;		/* earliest completion a wait object awaits */
	struct lgp_domain *prog_next;	/* progress thread's list */
	bool util_above;		/* o_s and o_r are charged by the utility above (lgp_util.h) */
	/* rxm's flow control over a core provider (lgp_ops.c) */
	struct lgp_ops_flow_ctrl *base_flow_ctrl;
	ssize_t (*credit_handler)(struct fid_ep *ep, uint64_t credits);
};

extern struct fi_ops lgp_domain_fi_ops;

int lgp_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain, void *context);

/* fi_open_ops of a domain: wraps rxm's flow control (lgp_ops.c). */
int lgp_domain_ops_open(struct fid *fid, const char *name, uint64_t flags,
			void **ops, void *context);

/*
 * Reads the real CQs the shim may read (drivable), consuming its own
 * completions and keeping the application's: a post may wait for a peer
 * in this process to progress (shm maps a peer on its first message) or
 * for its completion, while the application blocks elsewhere or in a
 * flush.  Lock held.
 */
void lgp_domain_drive(struct lgp_domain *dom);
/*
 * Signals the wait object of every CQ whose earliest synthesised
 * completion is due by now, and recomputes dom->next_signal; lock held
 * (lgp_cq.c).
 */
void lgp_domain_signal(struct lgp_domain *dom, uint64_t now);

#endif /* LGP_DOMAIN_H */

/* SPDX-License-Identifier: MIT */
/*
 * Endpoint wrapper: life cycle, bindings and connection management
 * (lgp_ep.c), data transfers (lgp_ep_data.c, lgp_ep_atomic.c).  On a
 * domain with every knob zero a transfer is counted and forwarded: no
 * copy, no lock, no queue; otherwise it goes through lgp_send_submit().
 */
#ifndef LGP_EP_H
#define LGP_EP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fi_atomic.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "lgp_engine.h"
#include "lgp_topo.h"

struct lgp_av;
struct lgp_cq;
struct lgp_domain;

struct lgp_ep {
	struct fid_ep ep;
	struct fid_ep *hep;
	struct lgp_domain *dom;
	struct lgp_cq *tx_cq;
	struct lgp_cq *rx_cq;
	bool tx_selective;	/* bound with FI_SELECTIVE_COMPLETION */
	struct lgp_eng_port port;	/* pacer, deferred operations */
	uint64_t tx_op_flags;	/* default flags of the transmit context */
	size_t inject_size;
	size_t inflight;	/* posted by the shim, real completion pending */
	bool flushing;		/* post so that completions come (no inject) */
	bool tx_counted;	/* a counter counts its sends (no inject) */
	bool enabled;		/* fi_enable succeeded: sends may be deferred */
	struct lgp_av *av;	/* bound address vector, or NULL */
	struct lgp_topo_dest peer;	/* a connected endpoint's peer (topology) */
	struct lgp_ep *next_in_dom;
};

extern struct fi_ops lgp_ep_fi_ops;
/* Data-transfer ops tables of an endpoint (lgp_ep_data.c, lgp_ep_atomic.c). */
extern struct fi_ops_msg lgp_ep_msg_ops;
extern struct fi_ops_tagged lgp_ep_tagged_ops;
extern struct fi_ops_rma lgp_ep_rma_ops;
extern struct fi_ops_atomic lgp_ep_atomic_ops;
/* Connection management of endpoints and passive endpoints (lgp_ep.c). */
extern struct fi_ops_cm lgp_cm_ops;

int lgp_ep_wrap(struct lgp_domain *dom, struct fid_ep *hep, void *context,
		size_t fclass, const struct fi_info *info, struct fid_ep **ep);

/*
 * Posts everything the endpoint holds, each at its release time, and waits
 * until the provider has completed those posts (bounded): what the
 * application saw sent reaches the wire before the endpoint closes, shuts
 * down or loses the address it sent to.
 */
void lgp_ep_flush(struct lgp_ep *ep);
/* The endpoint is usable: sends may be deferred, its CQs drivable; lock held. */
void lgp_ep_enabled(struct lgp_ep *ep);

/* Bytes of one element of an atomic datatype, 0 for an unknown one. */
size_t lgp_atomic_size(enum fi_datatype dt);

#endif /* LGP_EP_H */

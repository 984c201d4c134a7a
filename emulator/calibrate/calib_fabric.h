/* SPDX-License-Identifier: MIT */
/*
 * libfabric side of loggp-calibrate: one FI_MSG endpoint talking to one
 * peer, a send buffer and a ring of pre-posted receive slots, and
 * completion polling that times the individual fi_send and fi_cq_read
 * calls (the o_s and o_r samples).
 *
 * Progress is by polling the CQs (FI_WAIT_NONE); after opts->spin_polls
 * empty polls the caller yields the CPU, because the two processes (and
 * a shim's progress thread) share two cores.  Every wait gives up after
 * the run's timeout with one error line.  Functions print their error
 * and return a negative errno / -FI_* value.
 */
#ifndef CALIB_FABRIC_H
#define CALIB_FABRIC_H

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include "calib_opts.h"

#define CALIB_TX_DEPTH 512
#define CALIB_NAME_MAX 256

struct calib_fabric {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_ep *ep;
	struct fid_cq *txcq;
	struct fid_cq *rxcq;
	struct fid_mr *mr;
	void *desc;
	fi_addr_t peer;

	char *buf;			/* send area, then nrecv receive slots */
	size_t slot;			/* bytes per receive slot (max size) */
	unsigned nrecv;
	unsigned rx_next;		/* next slot to post */
	struct fi_context2 *rx_ctx;

	struct fi_context2 tx_ctx[CALIB_TX_DEPTH];
	struct fi_context2 *tx_free[CALIB_TX_DEPTH];
	unsigned tx_nfree;

	uint64_t timeout_ns;
	unsigned spin_polls;		/* empty polls before sched_yield; 0 never */
};

/*
 * Opens fabric, domain, AV, CQs and an enabled endpoint for opts->provider
 * with buffers for messages up to max_size and nrecv receive slots.
 */
int calib_fabric_open(struct calib_fabric *f, const struct calib_opts *opts,
		      size_t max_size, unsigned nrecv);

/* Provider name as libfabric reports it ("shm", "tcp;ofi_rxm"). */
const char *calib_fabric_provider(const struct calib_fabric *f);

int calib_fabric_getname(struct calib_fabric *f, void *name, size_t *len);

/* Inserts the peer's endpoint name into the AV. */
int calib_fabric_set_peer(struct calib_fabric *f, const void *name);

/* Posts count receives into the next ring slots. */
int calib_fabric_post_recvs(struct calib_fabric *f, unsigned count);

/*
 * Sends len bytes to the peer, retrying on -FI_EAGAIN while reaping send
 * completions.  *call_ns gets the duration of the fi_send call that was
 * accepted (may be NULL).
 */
int calib_fabric_send(struct calib_fabric *f, size_t len, uint64_t *call_ns);

/*
 * Polls until one receive completes.  *read_ns gets the duration of the
 * fi_cq_read call that returned it (may be NULL).
 */
int calib_fabric_wait_recv(struct calib_fabric *f, uint64_t *read_ns);

/* Polls until every send has completed. */
int calib_fabric_drain(struct calib_fabric *f);

void calib_fabric_close(struct calib_fabric *f);

#endif /* CALIB_FABRIC_H */

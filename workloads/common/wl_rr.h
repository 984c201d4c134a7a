/* SPDX-License-Identifier: MIT */
/*
 * wl_rr.h: remote reads as two-sided request/reply messages, and a barrier
 * that keeps serving them.
 *
 * Split-C's blocking read of a global pointer is a request to the owner and
 * a reply with the value.  Here the request is an MPI message of one 64-bit
 * key (what the owner's serve callback understands), the reply one 64-bit
 * word.  A rank has at most one read of its own outstanding, and while it
 * waits for the reply (or for a barrier) it serves the requests of other
 * ranks, so nothing deadlocks: every wait in this file is an MPI_Waitany
 * over the awaited message and the inbox of requests.
 *
 * rr_allor() is a dissemination barrier (ceil(log2 N) rounds, one message
 * sent and one received per rank per round) that also ORs a flag over all
 * ranks (OR is idempotent, so dissemination gives every rank the result).
 * When it returns, every rank has entered it, so every read issued before it
 * anywhere has been answered.  rr_close() is collective: it runs one more
 * rr_allor() (no request can be in flight after it) and cancels the inbox.
 *
 * Every message is counted in *msgs (the caller points it at its timed or
 * untimed counters): a read sends 8 bytes and receives 8, serving receives 8
 * and sends 8, a barrier round sends and receives 4.  Shared by the
 * programs that read remotely (em3d, connect).
 */
#ifndef WL_RR_H
#define WL_RR_H

#include <stdint.h>

#include <mpi.h>

#include "wl.h"

typedef int64_t (*rr_serve_fn)(void *arg, int64_t key);

struct rr {
	MPI_Comm comm;
	int rank;
	int nranks;
	rr_serve_fn serve;
	void *arg;
	struct wl_msgs *msgs;	/* where messages are counted */
	MPI_Request inbox;	/* posted receive for the next request */
	int64_t key_in;
};

/* Posts the inbox; not collective. */
void rr_open(struct rr *rr, MPI_Comm comm, rr_serve_fn serve, void *arg,
	     struct wl_msgs *msgs);
/* Blocking read of key at owner (owner != own rank); serves while waiting. */
int64_t rr_read(struct rr *rr, int owner, int64_t key);
/* Collective: barrier serving requests; returns the OR of flag over ranks. */
int rr_allor(struct rr *rr, int flag);
/* Barrier rounds of rr_allor(): ceil(log2 nranks). */
int rr_rounds(int nranks);
/* Collective: a last rr_allor(), then the inbox is cancelled. */
void rr_close(struct rr *rr);

#endif /* WL_RR_H */

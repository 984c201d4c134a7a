/* SPDX-License-Identifier: MIT */
/*
 * em3d_run.c: the timed iterations in write and in read mode.
 *
 * Write mode (Split-C's EM3D with stores): after a rank has updated its
 * kind-k nodes it stores each value that another rank reads into that
 * rank's ghost copy, one-way, then waits until every ghost value it reads
 * has arrived (a store_sync that knows its count, so no extra message).  A
 * store carries -g values: 1 (the default) is the study's one small store
 * per value, which makes the run sensitive to per-message costs (o, g);
 * larger values pack that many into one message to the same destination,
 * and -g >= the ghosts per destination is one bulk message per peer.  A
 * store is posted with MPI_Isend; the receiver posts MPI_Irecv straight
 * into the ghost slots, in the ghost order both sides agreed on at set-up,
 * and MPI's order per sender and tag puts every value in its slot.
 *
 * Read mode (Split-C's EM3D with global pointers): every edge whose source
 * lives on another rank is a blocking read at the moment the sum needs it,
 * one outstanding at a time (rr.c), each a round trip; no value is cached.
 * A barrier that keeps serving reads (rr_allor) ends each half iteration,
 * so no rank overwrites values another rank may still read.
 */
#include <string.h>

#include "em3d.h"

#define EM_TAG_PUSH	41	/* + kind */

static double em_read(struct em_ctx *x, int kind, int64_t slot)
{
	int64_t key = x->ghost[kind].idx[slot] * 2 + kind, bits;
	double v;

	bits = rr_read(&x->rr, x->gown[kind][slot], key);
	memcpy(&v, &bits, sizeof(v));
	if (x->armed) {
		v += 0.25;
		x->armed = false;
	}
	return v;
}

/* Updates the own kind-k nodes from their kind 1-k sources. */
void em_update(struct em_ctx *x, int kind)
{
	int other = 1 - kind, d = x->g.degree, e;
	const int64_t *ref = x->ref[kind];
	const double *w = x->w[kind], *local = x->val[other];
	double *v = x->val[kind], s, u;
	int64_t i;

	for (i = 0; i < x->n; i++) {
		s = 0;
		for (e = 0; e < d; e++, ref++, w++) {
			if (*ref >= 0)
				u = local[*ref];
			else if (x->mode == EM_READ)
				u = em_read(x, other, -1 - *ref);
			else
				u = x->gval[other][-1 - *ref];
			s += *w * u;
		}
		v[i] = 0.5 * v[i] + 0.5 * s;
	}
}

/* Write mode: stores the own kind-k values where they are read, and waits
 * for the kind-k ghost values of this rank. */
void em_push(struct em_ctx *x, int kind, struct wl_msgs *m)
{
	const struct em_xfer *gh = &x->ghost[kind], *sd = &x->send[kind];
	int64_t i, o, c, g = x->gran;
	int r, nreq = 0;

	if (x->g.nranks == 1)
		return;
	for (r = 0; r < x->g.nranks; r++) {
		for (o = 0; o < gh->cnt[r]; o += c) {
			c = gh->cnt[r] - o < g ? gh->cnt[r] - o : g;
			MPI_Irecv(x->gval[kind] + gh->off[r] + o, (int)c, MPI_DOUBLE, r,
				  EM_TAG_PUSH + kind, MPI_COMM_WORLD, &x->reqs[nreq++]);
			wl_msgs_recvd(m, sizeof(double) * (size_t)c);
		}
	}
	for (i = 0; i < sd->n; i++)
		x->sbuf[i] = x->val[kind][sd->idx[i]];
	for (r = 0; r < x->g.nranks; r++) {
		for (o = 0; o < sd->cnt[r]; o += c) {
			c = sd->cnt[r] - o < g ? sd->cnt[r] - o : g;
			MPI_Isend(x->sbuf + sd->off[r] + o, (int)c, MPI_DOUBLE, r,
				  EM_TAG_PUSH + kind, MPI_COMM_WORLD, &x->reqs[nreq++]);
			wl_msgs_sent(m, sizeof(double) * (size_t)c);
		}
	}
	MPI_Waitall(nreq, x->reqs, MPI_STATUSES_IGNORE);
	/* only the E ghosts of the last iteration still reach the result */
	if (x->armed && kind == EM_E && gh->n) {
		x->gval[kind][0] += 0.25;
		x->armed = false;
	}
}

void em_run(struct em_ctx *x, int64_t iters, struct wl_msgs *m)
{
	int64_t t;
	int k;

	x->rr.msgs = m;
	for (t = 0; t < iters; t++) {
		/*
		 * -X damages a value received in the last iteration: an early
		 * one could be averaged away below the check's tolerance.
		 */
		if (x->corrupt && t == iters - 1)
			x->armed = true;
		for (k = EM_E; k <= EM_H; k++) {
			em_update(x, k);
			if (x->mode == EM_WRITE)
				em_push(x, k, m);
			else
				rr_allor(&x->rr, 0);
		}
	}
	x->armed = false;
}

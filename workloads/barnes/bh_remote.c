/* SPDX-License-Identifier: MIT */
/*
 * bh_remote.c: remote reads of tree cells, their cache, and the service of
 * other ranks' reads.
 *
 * A remote read is a blocking round trip, as a Split-C read of a global
 * pointer is: post the receive of the reply, send an 8-byte request
 * (cell id, step) to the owner, then poll the reply while serving every
 * request that arrives, so two ranks reading from each other never
 * deadlock.  The reply is the cell's header and, for a leaf, its bodies.
 *
 * With the cache on, a cell read once in a step is kept for the rest of
 * the step: slot[r][c] indexes the record in pool.  Trees are rebuilt every
 * step, so the cache is emptied at its start.  A view into the pool stays
 * valid only until the next bh_remote_get() (the pool may move).
 *
 * Requests carry the step's parity in their tag and a rank serves only its
 * current step's: a rank that has left a step's final barrier and rebuilt
 * its tree may already ask a rank that has not yet seen that barrier
 * complete, and that request must wait for the new tree.  Two steps ahead
 * cannot happen (the barrier of the step between stops it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bh.h"

int bh_remote_init(struct bh_remote *x, const struct wl_prog *p, bool cache_on)
{
	memset(x, 0, sizeof(*x));
	x->p = p;
	x->cache_on = cache_on;
	x->slot = calloc((size_t)p->nranks, sizeof(*x->slot));
	x->nslot = calloc((size_t)p->nranks, sizeof(*x->nslot));
	if (!x->slot || !x->nslot) {
		bh_remote_fini(x);
		return -ENOMEM;
	}
	return 0;
}

static void bh_remote_clear(struct bh_remote *x)
{
	int r;

	for (r = 0; x->slot && r < x->p->nranks; r++) {
		free(x->slot[r]);
		x->slot[r] = NULL;
		x->nslot[r] = 0;
	}
	x->npool = 0;
}

void bh_remote_fini(struct bh_remote *x)
{
	bh_remote_clear(x);
	free(x->slot);
	free(x->nslot);
	free(x->pool);
	x->slot = NULL;
	x->nslot = NULL;
	x->pool = NULL;
}

/* Starts a step: t is what this rank serves from now on. */
void bh_remote_begin(struct bh_remote *x, const struct bh_tree *t, int32_t step,
		     struct wl_msgs *m, bool counting)
{
	bh_remote_clear(x);
	x->tree = t;
	x->step = step;
	x->m = m;
	x->counting = counting;
}

/* Answers every request of this step that has arrived. */
int bh_remote_serve(struct bh_remote *x)
{
	struct bh_req q;
	MPI_Status st;
	size_t bytes;
	int flag;

	for (;;) {
		MPI_Iprobe(MPI_ANY_SOURCE, BH_TAG_REQ + (x->step & 1), MPI_COMM_WORLD, &flag, &st);
		if (!flag)
			return 0;
		MPI_Recv(&q, sizeof(q), MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		wl_msgs_recvd(x->m, sizeof(q));
		if (q.step != x->step || q.cell < 0 || q.cell >= x->tree->ncell) {
			fprintf(stderr, "barnes: rank %d: bad request from rank %d: cell %d of step %d (serving step %d, %d cells)\n",
				x->p->rank, st.MPI_SOURCE, q.cell, q.step, x->step,
				x->tree->ncell);
			return -EPROTO;
		}
		bytes = bh_tree_pack(x->tree, q.cell, &x->reply);
		MPI_Send(&x->reply, (int)bytes, MPI_BYTE, st.MPI_SOURCE, BH_TAG_REPLY,
			 MPI_COMM_WORLD);
		wl_msgs_sent(x->m, bytes);
	}
}

/* One blocking read of cell c of rank r into rec. */
static int bh_remote_fetch(struct bh_remote *x, int r, int32_t c, struct bh_rec *rec)
{
	struct bh_req q = { .cell = c, .step = x->step };
	MPI_Request rq;
	MPI_Status st;
	int done = 0, bytes, ret;

	MPI_Irecv(rec, sizeof(*rec), MPI_BYTE, r, BH_TAG_REPLY, MPI_COMM_WORLD, &rq);
	MPI_Send(&q, sizeof(q), MPI_BYTE, r, BH_TAG_REQ + (x->step & 1), MPI_COMM_WORLD);
	wl_msgs_sent(x->m, sizeof(q));
	for (;;) {
		MPI_Test(&rq, &done, &st);
		if (done)
			break;
		ret = bh_remote_serve(x);
		if (ret) {
			MPI_Cancel(&rq);
			MPI_Wait(&rq, MPI_STATUS_IGNORE);
			return ret;
		}
	}
	MPI_Get_count(&st, MPI_BYTE, &bytes);
	wl_msgs_recvd(x->m, (size_t)bytes);
	if (x->counting)
		x->reply_bytes += bytes;
	if (bytes < (int)sizeof(rec->h) || rec->h.nbody < 0 || rec->h.nbody > BH_LEAF ||
	    (size_t)bytes != sizeof(rec->h) + sizeof(*rec->b) * (size_t)rec->h.nbody ||
	    rec->h.ncell <= c) {
		fprintf(stderr, "barnes: rank %d: bad reply of %d bytes from rank %d for cell %d\n",
			x->p->rank, bytes, r, c);
		return -EPROTO;
	}
	if (x->corrupt && rec->h.nbody > 0) {
		/* -X: one received mass made heavier than the whole system */
		rec->b[0].mass += 1e4;
		x->corrupt = false;
	}
	return 0;
}

/* Cell c of rank r: from the cache, or read from r. */
int bh_remote_get(struct bh_remote *x, int r, int32_t c, struct bh_view *v)
{
	struct bh_rec *rec;
	int32_t i;
	int ret;

	if (!x->cache_on) {
		ret = bh_remote_fetch(x, r, c, &x->scratch);
		if (ret)
			return ret;
		x->misses += x->counting;
		v->h = &x->scratch.h;
		v->b = x->scratch.b;
		return 0;
	}
	if (x->slot[r] && c < x->nslot[r] && x->slot[r][c] >= 0) {
		rec = &x->pool[x->slot[r][c]];
		x->hits += x->counting;
		goto out;
	}
	if (x->npool == x->cappool) {
		int64_t n = x->cappool ? 2 * x->cappool : 1024;
		void *p = realloc(x->pool, sizeof(*x->pool) * (size_t)n);

		if (!p)
			return -ENOMEM;
		x->pool = p;
		x->cappool = n;
	}
	rec = &x->pool[x->npool];
	ret = bh_remote_fetch(x, r, c, rec);
	if (ret)
		return ret;
	x->misses += x->counting;
	if (!x->slot[r]) {
		/* the first read of a tree learns its size */
		x->slot[r] = malloc(sizeof(*x->slot[r]) * (size_t)rec->h.ncell);
		if (!x->slot[r])
			return -ENOMEM;
		x->nslot[r] = rec->h.ncell;
		for (i = 0; i < rec->h.ncell; i++)
			x->slot[r][i] = -1;
	}
	if (c >= x->nslot[r]) {
		fprintf(stderr, "barnes: rank %d: cell %d of rank %d is beyond its %d cells\n",
			x->p->rank, c, r, x->nslot[r]);
		return -EPROTO;
	}
	x->slot[r][c] = (int32_t)x->npool++;
out:
	v->h = &rec->h;
	v->b = rec->b;
	return 0;
}

/*
 * Ends a step: this rank has no reads left, but others may; serve them
 * until every rank has entered the barrier (then none has a read left:
 * each entered only after its last reply arrived).
 */
int bh_remote_end(struct bh_remote *x)
{
	MPI_Request rq;
	int done = 0, ret;

	MPI_Ibarrier(MPI_COMM_WORLD, &rq);
	for (;;) {
		MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
		if (done)
			return 0;
		ret = bh_remote_serve(x);
		if (ret)
			return ret;
	}
}

/* SPDX-License-Identifier: MIT */
/*
 * cc_graph.c: the random graph from its hash, one rank's share of it (local
 * edges, remote neighbours in both directions), and rank 0's serial
 * union-find.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "connect.h"
#include "wl_graph.h"
#include "wl_hash.h"

/* The other ends (global indices) of the edges vertex v draws; their count. */
int cc_vertex_edges(const struct cc_graph *g, int64_t v, int64_t *dst)
{
	const struct wl_graph_shape s = {
		.total = g->total, .nranks = g->nranks, .remote_pct = g->remote_pct,
	};
	uint64_t key = wl_mix64(g->seed * WL_GOLDEN + 0x2545f4914f6cdd1dULL);
	int own = wl_owner(g->total, g->nranks, v, NULL), k, cnt;

	key ^= wl_mix64((uint64_t)v + 0x5851f42d4c957f2dULL);
	cnt = g->edges_pct / 100 +
	      ((key >> 40) < ((uint64_t)(g->edges_pct % 100) << 24) / 100);
	for (k = 0; k < cnt; k++)
		dst[k] = wl_graph_edge(&s, key, own, k, NULL);
	return cnt;
}

/*
 * Collective.  Remote edges drawn here are remote neighbours here, and are
 * sent to the other end's owner, for which they are remote neighbours too.
 */
int cc_graph_build(struct cc_ctx *x)
{
	int nr = x->g.nranks, me = x->p->rank, r, k, cnt, ok, all_ok, ret = -ENOMEM;
	int *sc = NULL, *so, *rc, *ro, *fill;
	int64_t dst[CC_EDGES_MAX], i, nout = 0, nin = 0, lo, n, *out = NULL, *in = NULL;

	wl_part(x->g.total, nr, me, &x->lo, &x->n);
	x->ledge = malloc(sizeof(int64_t) * 2 * (size_t)(x->n * CC_EDGES_MAX + 1));
	x->parent = malloc(sizeof(int64_t) * (size_t)(x->n + 1));
	x->label = malloc(sizeof(int64_t) * (size_t)(x->n + 1));
	sc = calloc((size_t)nr * 5, sizeof(int));
	out = malloc(sizeof(int64_t) * 2 * (size_t)(x->n * CC_EDGES_MAX + 1));
	ok = x->ledge && x->parent && x->label && sc && out;
	MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	if (!all_ok)
		goto out;
	so = sc + nr;
	rc = so + nr;
	ro = rc + nr;
	fill = ro + nr;
	/* first pass: count the remote edges per owner */
	for (i = 0; i < x->n; i++) {
		cnt = cc_vertex_edges(&x->g, x->lo + i, dst);
		for (k = 0; k < cnt; k++) {
			r = wl_owner(x->g.total, nr, dst[k], NULL);
			if (r != me)
				sc[r] += 2;
		}
	}
	for (r = 1; r < nr; r++)
		so[r] = so[r - 1] + sc[r - 1];
	/* second pass: local edges, and (other end, own end) pairs by owner */
	x->nledge = 0;
	for (i = 0; i < x->n; i++) {
		cnt = cc_vertex_edges(&x->g, x->lo + i, dst);
		for (k = 0; k < cnt; k++) {
			r = wl_owner(x->g.total, nr, dst[k], NULL);
			if (r == me) {
				x->ledge[2 * x->nledge] = i;
				x->ledge[2 * x->nledge + 1] = dst[k] - x->lo;
				x->nledge++;
				continue;
			}
			wl_part(x->g.total, nr, r, &lo, &n);
			out[so[r] + fill[r]++] = dst[k] - lo;
			out[so[r] + fill[r]++] = i;
			nout++;
		}
	}
	MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, MPI_COMM_WORLD);
	for (r = 0; r < nr; r++) {
		ro[r] = r ? ro[r - 1] + rc[r - 1] : 0;
		nin += rc[r] / 2;
	}
	in = malloc(sizeof(int64_t) * 2 * (size_t)(nin + 1));
	x->rem = malloc(sizeof(*x->rem) * (size_t)(nout + nin + 1));
	ok = in && x->rem;
	MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	if (!all_ok)
		goto out;
	MPI_Alltoallv(out, sc, so, MPI_INT64_T, in, rc, ro, MPI_INT64_T, MPI_COMM_WORLD);
	x->nrem = 0;
	for (r = 0; r < nr; r++) {
		for (k = 0; k < sc[r]; k += 2)	/* drawn here: own end second */
			x->rem[x->nrem++] = (struct cc_remote){
				.v = out[so[r] + k + 1], .idx = out[so[r] + k], .owner = r,
			};
		for (k = 0; k < rc[r]; k += 2)	/* drawn there: own end first */
			x->rem[x->nrem++] = (struct cc_remote){
				.v = in[ro[r] + k], .idx = in[ro[r] + k + 1], .owner = r,
			};
	}
	ret = 0;
out:
	free(sc);
	free(out);
	free(in);
	return ret;
}

void cc_graph_free(struct cc_ctx *x)
{
	free(x->ledge);
	free(x->rem);
	free(x->parent);
	free(x->label);
}

static int64_t cc_find(int64_t *parent, int64_t v)
{
	while (parent[v] != v) {
		parent[v] = parent[parent[v]];	/* path halving */
		v = parent[v];
	}
	return v;
}

/*
 * Rank 0's reference: union-find over every edge, the smaller root becoming
 * the parent, so every root is its component's smallest vertex.  Counts the
 * labels in got that differ (the first such vertex and its right label)
 * and the components.
 */
int cc_serial(const struct cc_graph *g, const int64_t *got, int64_t *bad,
	      int64_t *first_bad, int64_t *first_want, int64_t *components)
{
	int64_t *parent, dst[CC_EDGES_MAX], v, a, b;
	int k, cnt;

	parent = malloc(sizeof(*parent) * (size_t)(g->total + 1));
	if (!parent)
		return -ENOMEM;
	for (v = 0; v < g->total; v++)
		parent[v] = v;
	for (v = 0; v < g->total; v++) {
		cnt = cc_vertex_edges(g, v, dst);
		for (k = 0; k < cnt; k++) {
			a = cc_find(parent, v);
			b = cc_find(parent, dst[k]);
			if (a < b)
				parent[b] = a;
			else
				parent[a] = b;
		}
	}
	*bad = 0;
	*first_bad = -1;
	*first_want = -1;
	*components = 0;
	for (v = 0; v < g->total; v++) {
		a = cc_find(parent, v);
		*components += a == v;
		if (got[v] != a && !(*bad)++) {
			*first_bad = v;
			*first_want = a;
		}
	}
	free(parent);
	return 0;
}

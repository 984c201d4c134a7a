/* SPDX-License-Identifier: MIT */
/*
 * em3d_graph.c: the EM3D graph from its hash, one rank's share of it (edges,
 * ghost slots, who needs which of its values), and the serial reference.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "em3d.h"
#include "wl_graph.h"
#include "wl_hash.h"

#define EM_KEY_SHIFT	40	/* (owner << 40) | index sorts ghosts by owner */

/*
 * Destinations (global indices of the other kind) and normalised weights of
 * the edges of one node.  Only ranks that own nodes are destinations: with
 * TOTAL < N those are ranks 0..TOTAL-1.
 */
void em_node_edges(const struct em_graph *g, int kind, int64_t node,
		   int64_t *dst, double *w)
{
	const struct wl_graph_shape s = {
		.total = g->total, .nranks = g->nranks, .remote_pct = g->remote_pct,
	};
	uint64_t key = wl_mix64(g->seed * WL_GOLDEN + 0x632be59bd9b4e019ULL), h1;
	int own = wl_owner(g->total, g->nranks, node, NULL), k;
	double sum = 0;

	key ^= wl_mix64((uint64_t)node * 2 + (uint64_t)kind);
	for (k = 0; k < g->degree; k++) {
		dst[k] = wl_graph_edge(&s, key, own, k, &h1);
		w[k] = 0.5 + (double)(h1 & 0xffffff) * 0x1p-24;
		sum += w[k];
	}
	for (k = 0; k < g->degree; k++)
		w[k] /= sum;
}

double em_init_value(const struct em_graph *g, int kind, int64_t node)
{
	uint64_t x = wl_mix64(g->seed ^ wl_mix64((uint64_t)node * 2 + (uint64_t)kind + 7));

	return wl_unit(x);
}

static int em_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static void em_xfer_free(struct em_xfer *t)
{
	free(t->cnt);
	free(t->off);
	free(t->idx);
	memset(t, 0, sizeof(*t));
}

static int em_xfer_alloc(struct em_xfer *t, int nranks, int64_t n)
{
	t->cnt = calloc((size_t)nranks, sizeof(*t->cnt));
	t->off = calloc((size_t)nranks, sizeof(*t->off));
	t->idx = malloc(sizeof(*t->idx) * (size_t)(n ? n : 1));
	t->n = n;
	return t->cnt && t->off && t->idx ? 0 : -ENOMEM;
}

/*
 * Edges of the own kind-k nodes; the remote sources become ghost slots of
 * kind 1-k, numbered in (owner, index) order.
 */
static int em_build_kind(struct em_ctx *x, int kind, int64_t *dst, double *w)
{
	int other = 1 - kind, d = x->g.degree, r, me = x->p->rank;
	struct em_xfer *gh = &x->ghost[other];
	int64_t i, e, nkeys = 0, nuniq = 0, *keys, *found, lo, n;
	int ret = -ENOMEM;

	x->ref[kind] = malloc(sizeof(int64_t) * (size_t)(x->n * d + 1));
	x->w[kind] = malloc(sizeof(double) * (size_t)(x->n * d + 1));
	keys = malloc(sizeof(*keys) * (size_t)(x->n * d + 1));
	if (!x->ref[kind] || !x->w[kind] || !keys)
		goto out;
	for (i = 0; i < x->n; i++) {
		em_node_edges(&x->g, kind, x->lo + i, dst, w);
		for (e = 0; e < d; e++) {
			int64_t *ref = &x->ref[kind][i * d + e];

			x->w[kind][i * d + e] = w[e];
			r = wl_owner(x->g.total, x->g.nranks, dst[e], NULL);
			if (r == me) {
				*ref = dst[e] - x->lo;
				continue;
			}
			wl_part(x->g.total, x->g.nranks, r, &lo, &n);
			*ref = ((int64_t)r << EM_KEY_SHIFT) | (dst[e] - lo);
			keys[nkeys++] = *ref;
			*ref = -1 - *ref;	/* remote; resolved to a slot below */
		}
	}
	x->reads[kind] = nkeys;
	qsort(keys, (size_t)nkeys, sizeof(*keys), em_cmp_i64);
	for (i = 0; i < nkeys; i++)
		if (!nuniq || keys[nuniq - 1] != keys[i])
			keys[nuniq++] = keys[i];
	if (em_xfer_alloc(gh, x->g.nranks, nuniq))
		goto out;
	x->gval[other] = calloc((size_t)(nuniq ? nuniq : 1), sizeof(double));
	x->gown[other] = malloc(sizeof(int) * (size_t)(nuniq ? nuniq : 1));
	if (!x->gval[other] || !x->gown[other])
		goto out;
	for (i = 0; i < nuniq; i++) {
		r = (int)(keys[i] >> EM_KEY_SHIFT);
		gh->idx[i] = keys[i] & (((int64_t)1 << EM_KEY_SHIFT) - 1);
		gh->cnt[r]++;
		x->gown[other][i] = r;
	}
	for (r = 1; r < x->g.nranks; r++)
		gh->off[r] = gh->off[r - 1] + gh->cnt[r - 1];
	for (i = 0; i < x->n * d; i++) {
		int64_t key = -1 - x->ref[kind][i];

		if (x->ref[kind][i] >= 0)
			continue;
		found = bsearch(&key, keys, (size_t)nuniq, sizeof(*keys), em_cmp_i64);
		x->ref[kind][i] = -1 - (found - keys);
	}
	ret = 0;
out:
	free(keys);
	return ret;
}

/* Collective: tells each owner which of its kind-k values this rank reads. */
static int em_build_send(struct em_ctx *x, int kind)
{
	struct em_xfer *gh = &x->ghost[kind], *sd = &x->send[kind];
	int nr = x->g.nranks, r, ret = -ENOMEM, ok, all_ok;
	int *sc = NULL, *so = NULL, *rc = NULL, *ro = NULL;
	int64_t n = 0;

	sd->cnt = calloc((size_t)nr, sizeof(*sd->cnt));
	sd->off = calloc((size_t)nr, sizeof(*sd->off));
	sc = malloc(sizeof(int) * (size_t)nr * 4);
	ok = sd->cnt && sd->off && sc;
	MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	if (!all_ok)
		goto out;
	so = sc + nr;
	rc = so + nr;
	ro = rc + nr;
	MPI_Alltoall(gh->cnt, 1, MPI_INT64_T, sd->cnt, 1, MPI_INT64_T, MPI_COMM_WORLD);
	for (r = 0; r < nr; r++) {
		sc[r] = (int)gh->cnt[r];
		so[r] = (int)gh->off[r];
		rc[r] = (int)sd->cnt[r];
		sd->off[r] = n;
		ro[r] = (int)n;
		n += sd->cnt[r];
	}
	sd->n = n;
	sd->idx = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
	ok = sd->idx != NULL;
	MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	if (!all_ok)
		goto out;
	MPI_Alltoallv(gh->idx, sc, so, MPI_INT64_T, sd->idx, rc, ro, MPI_INT64_T,
		      MPI_COMM_WORLD);
	ret = 0;
out:
	free(sc);
	return ret;
}

/* Collective.  0, or -ENOMEM on every rank if any rank ran out. */
int em_graph_build(struct em_ctx *x)
{
	int64_t dst[EM_DEGREE_MAX], i, nmsg = 0, most = 0;
	double w[EM_DEGREE_MAX];
	int ok, all_ok, k, r;

	wl_part(x->g.total, x->g.nranks, x->p->rank, &x->lo, &x->n);
	ok = 1;
	for (k = 0; k < 2; k++) {
		x->val[k] = malloc(sizeof(double) * (size_t)(x->n ? x->n : 1));
		ok = ok && x->val[k] && !em_build_kind(x, k, dst, w);
	}
	MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	if (!all_ok)
		return -ENOMEM;
	for (k = 0; k < 2; k++) {
		if (em_build_send(x, k))
			return -ENOMEM;
		for (i = 0; i < x->n; i++)
			x->val[k][i] = em_init_value(&x->g, k, x->lo + i);
		nmsg = 0;
		for (r = 0; r < x->g.nranks; r++)
			nmsg += (x->ghost[k].cnt[r] + x->gran - 1) / x->gran +
				(x->send[k].cnt[r] + x->gran - 1) / x->gran;
		if (nmsg > most)
			most = nmsg;
	}
	i = x->send[0].n > x->send[1].n ? x->send[0].n : x->send[1].n;
	x->sbuf = malloc(sizeof(double) * (size_t)(i ? i : 1));
	x->reqs = malloc(sizeof(MPI_Request) * (size_t)(most ? most : 1));
	ok = x->sbuf && x->reqs;
	MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	return all_ok ? 0 : -ENOMEM;
}

void em_graph_free(struct em_ctx *x)
{
	int k;

	for (k = 0; k < 2; k++) {
		free(x->val[k]);
		free(x->ref[k]);
		free(x->w[k]);
		free(x->gval[k]);
		free(x->gown[k]);
		em_xfer_free(&x->ghost[k]);
		em_xfer_free(&x->send[k]);
	}
	free(x->sbuf);
	free(x->reqs);
}

/*
 * Rank 0's reference: the same graph and the same sums in the same order,
 * on global arrays; *maxerr is the largest difference to got_e/got_h.
 */
int em_serial(const struct em_graph *g, int64_t iters, const double *got_e,
	      const double *got_h, double *maxerr)
{
	int64_t N = g->total, d = g->degree, i, t, e;
	double *val[2], *w = NULL, s, diff;
	int64_t *dst = NULL;
	const double *got[2] = { got_e, got_h };
	int k, ret = -ENOMEM;

	val[0] = malloc(sizeof(double) * (size_t)N);
	val[1] = malloc(sizeof(double) * (size_t)N);
	dst = malloc(sizeof(*dst) * (size_t)(2 * N * d));
	w = malloc(sizeof(*w) * (size_t)(2 * N * d));
	if (!val[0] || !val[1] || !dst || !w)
		goto out;
	for (k = 0; k < 2; k++) {
		for (i = 0; i < N; i++) {
			val[k][i] = em_init_value(g, k, i);
			em_node_edges(g, k, i, dst + (k * N + i) * d, w + (k * N + i) * d);
		}
	}
	for (t = 0; t < iters; t++) {
		for (k = 0; k < 2; k++) {
			const int64_t *kd = dst + k * N * d;
			const double *kw = w + k * N * d, *u = val[1 - k];

			for (i = 0; i < N; i++) {
				s = 0;
				for (e = 0; e < d; e++)
					s += kw[i * d + e] * u[kd[i * d + e]];
				val[k][i] = 0.5 * val[k][i] + 0.5 * s;
			}
		}
	}
	*maxerr = 0;
	for (k = 0; k < 2; k++) {
		for (i = 0; i < N; i++) {
			diff = fabs(val[k][i] - got[k][i]);
			if (!(diff <= *maxerr))	/* NaN counts as the worst */
				*maxerr = isnan(diff) ? INFINITY : diff;
		}
	}
	ret = 0;
out:
	free(val[0]);
	free(val[1]);
	free(dst);
	free(w);
	return ret;
}

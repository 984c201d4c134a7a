/* SPDX-License-Identifier: MIT */
/*
 * bh_tree.c: the octree of one rank's bodies, rebuilt every step.
 *
 * Cells live in one array and name their children by index (a cell id is
 * what a remote read asks for); a leaf holds up to BH_LEAF bodies, copied
 * into wb in tree order so that a reply is one header and one run of
 * bodies.  Every cell carries its centre of mass, total mass and cube.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bh.h"

static int bh_tree_grow(void **buf, int32_t *cap, int32_t want, size_t size)
{
	int32_t n = *cap ? *cap : 64;
	void *p;

	if (want <= *cap)
		return 0;
	while (n < want)
		n = n > INT32_MAX / 2 ? INT32_MAX : 2 * n;
	p = realloc(*buf, size * (size_t)n);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = n;
	return 0;
}

/* The cell of bodies idx[lo, hi): its id, or a negative errno. */
static int32_t bh_tree_cell(struct bh_tree *t, const struct bh_body *b, int32_t lo,
			    int32_t hi, const double center[3], double half, int depth)
{
	int32_t id = t->ncell, cnt[8] = { 0 }, at[8], i, k;
	struct bh_hdr *h;
	double m = 0, c[3] = { 0, 0, 0 };
	int o, d, ret;

	ret = bh_tree_grow((void **)&t->cell, &t->cap, id + 1, sizeof(*t->cell));
	if (ret)
		return ret;
	t->ncell++;
	h = &t->cell[id].h;
	memset(&t->cell[id], 0, sizeof(t->cell[id]));
	memcpy(h->center, center, sizeof(h->center));
	h->half = half;
	for (o = 0; o < 8; o++)
		h->child[o] = -1;
	if (hi - lo <= BH_LEAF) {
		t->cell[id].first = t->nb;
		h->nbody = hi - lo;
		for (i = lo; i < hi; i++) {
			const struct bh_body *x = &b[t->idx[i]];
			struct bh_wbody *w = &t->wb[t->nb++];

			memcpy(w->pos, x->pos, sizeof(w->pos));
			w->mass = x->mass;
			w->id = x->id;
			m += x->mass;
			for (d = 0; d < 3; d++)
				c[d] += x->mass * x->pos[d];
		}
		goto sum;
	}
	if (depth >= BH_DEPTH_MAX)
		return -ERANGE;
	/* counting sort of the bodies by octant */
	for (i = lo; i < hi; i++) {
		const double *q = b[t->idx[i]].pos;

		o = (q[0] >= center[0]) | (q[1] >= center[1]) << 1 | (q[2] >= center[2]) << 2;
		t->tmp[i] = o;
		cnt[o]++;
	}
	for (o = 0, k = lo; o < 8; o++) {
		at[o] = k;
		k += cnt[o];
	}
	for (i = lo; i < hi; i++)
		t->tmp[i] = t->idx[i] | (int32_t)((uint32_t)t->tmp[i] << 28);
	for (i = lo; i < hi; i++) {
		o = (int)((uint32_t)t->tmp[i] >> 28);
		t->idx[at[o]++] = t->tmp[i] & 0x0fffffff;
	}
	for (o = 0, k = lo; o < 8; k += cnt[o], o++) {
		double cc[3];
		int32_t child;

		if (!cnt[o])
			continue;
		for (d = 0; d < 3; d++)
			cc[d] = center[d] + ((o >> d) & 1 ? half : -half) / 2;
		child = bh_tree_cell(t, b, k, k + cnt[o], cc, half / 2, depth + 1);
		if (child < 0)
			return child;
		h = &t->cell[id].h;	/* the array may have moved */
		h->child[o] = child;
		m += t->cell[child].h.mass;
		for (d = 0; d < 3; d++)
			c[d] += t->cell[child].h.mass * t->cell[child].h.com[d];
	}
sum:
	h = &t->cell[id].h;
	h->mass = m;
	for (d = 0; d < 3; d++)
		h->com[d] = m > 0 ? c[d] / m : center[d];
	return id;
}

/*
 * Rebuilds t from the n bodies b.  -ENOMEM, -ERANGE when more than BH_LEAF
 * bodies coincide (no depth separates them), -EOVERFLOW past 2^28 bodies.
 */
int bh_tree_build(struct bh_tree *t, const struct bh_body *b, int32_t n)
{
	double lo[3] = { INFINITY, INFINITY, INFINITY }, hi[3], center[3], half = 0;
	int32_t i;
	int d, ret;

	t->ncell = 0;
	t->nb = 0;
	if (n == 0)
		return 0;
	if (n > 0x0fffffff)
		return -EOVERFLOW;
	if (n > t->capb) {
		void *w = realloc(t->wb, sizeof(*t->wb) * (size_t)n);
		void *p = w ? realloc(t->idx, sizeof(*t->idx) * (size_t)n) : NULL;
		void *q = p ? realloc(t->tmp, sizeof(*t->tmp) * (size_t)n) : NULL;

		t->wb = w ? w : t->wb;
		t->idx = p ? p : t->idx;
		t->tmp = q ? q : t->tmp;
		if (!q)
			return -ENOMEM;
		t->capb = n;
	}
	for (d = 0; d < 3; d++)
		hi[d] = -INFINITY;
	for (i = 0; i < n; i++) {
		t->idx[i] = i;
		for (d = 0; d < 3; d++) {
			lo[d] = fmin(lo[d], b[i].pos[d]);
			hi[d] = fmax(hi[d], b[i].pos[d]);
		}
	}
	for (d = 0; d < 3; d++) {
		center[d] = (lo[d] + hi[d]) / 2;
		half = fmax(half, (hi[d] - lo[d]) / 2);
	}
	/* a little larger, so that no body sits on the far faces */
	half = half * (1 + 1e-9) + 1e-12;
	ret = bh_tree_cell(t, b, 0, n, center, half, 0);
	if (ret < 0)
		return ret;
	for (i = 0; i < t->ncell; i++)
		t->cell[i].h.ncell = t->ncell;
	return 0;
}

void bh_tree_fini(struct bh_tree *t)
{
	free(t->cell);
	free(t->wb);
	free(t->idx);
	free(t->tmp);
	memset(t, 0, sizeof(*t));
}

void bh_tree_view(const struct bh_tree *t, int32_t c, struct bh_view *v)
{
	v->h = &t->cell[c].h;
	v->b = t->wb + t->cell[c].first;
}

/* Cell c as a reply; returns the bytes to send. */
size_t bh_tree_pack(const struct bh_tree *t, int32_t c, struct bh_rec *out)
{
	const struct bh_cell *x = &t->cell[c];

	out->h = x->h;
	memcpy(out->b, t->wb + x->first, sizeof(*out->b) * (size_t)x->h.nbody);
	return sizeof(out->h) + sizeof(*out->b) * (size_t)x->h.nbody;
}

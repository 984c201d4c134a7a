/* SPDX-License-Identifier: MIT */
/*
 * bh_force.c: the Barnes-Hut force walk over every rank's tree.
 *
 * A body walks each non-empty rank's tree from its root (this rank's
 * locally, the others' through bh_remote_get).  A cell whose side s and
 * distance d from the body to its centre of mass satisfy s < theta * d,
 * and whose cube does not contain the body, acts as one mass at its centre
 * of mass (monopole); otherwise it is opened.  A leaf's bodies act one by
 * one (the body itself is skipped by id).  theta = 0 opens everything: the
 * direct sum.
 *
 * Between two bodies the rank serves the requests that have arrived, so a
 * rank busy with local work still answers within one body's walk, as a
 * Split-C program polls at its communication points.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "bh.h"

#define BH_STACK	(8 * BH_DEPTH_MAX + 8)

static int bh_walk(struct bh_remote *x, int r, struct bh_body *body, double theta2)
{
	int32_t stack[BH_STACK], sp = 0, k;
	struct bh_view v;
	int ret, d, o;

	stack[sp++] = 0;
	while (sp) {
		int32_t c = stack[--sp];
		const struct bh_hdr *h;
		double d2 = 0, far = 0;

		if (r == x->p->rank) {
			bh_tree_view(x->tree, c, &v);
		} else {
			ret = bh_remote_get(x, r, c, &v);
			if (ret)
				return ret;
		}
		h = v.h;
		if (h->nbody > 0) {
			for (k = 0; k < h->nbody; k++)
				if (v.b[k].id != body->id)
					bh_pair(body->pos, v.b[k].pos, v.b[k].mass, body->acc,
						&body->phi);
			continue;
		}
		for (d = 0; d < 3; d++) {
			double dx = h->com[d] - body->pos[d];

			d2 += dx * dx;
			far = fmax(far, fabs(body->pos[d] - h->center[d]));
		}
		if (far > h->half && 4 * h->half * h->half < theta2 * d2) {
			bh_pair(body->pos, h->com, h->mass, body->acc, &body->phi);
			continue;
		}
		for (o = 0; o < 8; o++) {
			if (h->child[o] < 0)
				continue;
			if (sp == BH_STACK) {
				fprintf(stderr, "barnes: rank %d: tree walk deeper than %d cells\n",
					x->p->rank, BH_STACK);
				return -EOVERFLOW;
			}
			stack[sp++] = h->child[o];
		}
	}
	return 0;
}

/* acc and phi of the n bodies b; counts[r] says which trees are empty. */
int bh_force(struct bh_remote *x, const int64_t *counts, struct bh_body *b,
	     int32_t n, double theta)
{
	int nranks = x->p->nranks, k, r, ret;
	int32_t i;

	for (i = 0; i < n; i++) {
		b[i].acc[0] = b[i].acc[1] = b[i].acc[2] = 0;
		b[i].phi = 0;
		/* own tree first, then the others from the next rank on */
		for (k = 0; k < nranks; k++) {
			r = (x->p->rank + k) % nranks;
			if (!counts[r])
				continue;
			ret = bh_walk(x, r, &b[i], theta * theta);
			if (ret)
				return ret;
		}
		ret = bh_remote_serve(x);
		if (ret)
			return ret;
	}
	return 0;
}

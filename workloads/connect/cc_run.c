/* SPDX-License-Identifier: MIT */
/*
 * cc_run.c: the timed part of connect, after Split-C's Connect.
 *
 * Local phase: union-find over the edges whose ends are both on this rank,
 * no communication; each local component starts with its smallest global
 * vertex as its label (blocks are contiguous, so that is its smallest local
 * index, which the union keeps as the root).
 *
 * Global phase, in rounds: for every remote neighbour of an own vertex, a
 * blocking remote read of that neighbour's current label (rr.c: a request
 * and a reply, one outstanding at a time, serving other ranks' reads while
 * waiting); a smaller label lowers the label of the whole local component at
 * once, and later reads (anywhere) see it.  A round ends with a barrier
 * that ORs "some label changed" over the ranks; the first round in which no
 * rank changed any label ends the phase.  In that round nothing changed
 * while every rank read every remote neighbour, so labels agree across every
 * edge; each label is a vertex of the component, and the smallest vertex
 * never changes its own, so every label is the component's smallest vertex.
 */
#include "connect.h"

static int64_t cc_find(int64_t *parent, int64_t v)
{
	while (parent[v] != v) {
		parent[v] = parent[parent[v]];
		v = parent[v];
	}
	return v;
}

int64_t cc_label(const struct cc_ctx *x, int64_t i)
{
	return x->label[x->parent[i]];
}

static void cc_local(struct cc_ctx *x)
{
	int64_t i, a, b;

	for (i = 0; i < x->n; i++)
		x->parent[i] = i;
	for (i = 0; i < x->nledge; i++) {
		a = cc_find(x->parent, x->ledge[2 * i]);
		b = cc_find(x->parent, x->ledge[2 * i + 1]);
		if (a < b)
			x->parent[b] = a;
		else
			x->parent[a] = b;
	}
	for (i = 0; i < x->n; i++) {
		x->parent[i] = cc_find(x->parent, i);
		if (x->parent[i] == i)
			x->label[i] = x->lo + i;
	}
}

/* Timed: both phases; returns the rounds of the global phase. */
int64_t cc_run(struct cc_ctx *x, struct wl_msgs *m)
{
	const struct cc_remote *e;
	int64_t rounds = 0, i, l, *mine;
	int changed;

	x->rr.msgs = m;
	cc_local(x);
	do {
		changed = 0;
		for (i = 0; i < x->nrem; i++) {
			e = &x->rem[i];
			l = rr_read(&x->rr, e->owner, e->idx);
			if (x->corrupt) {	/* -X: not a vertex, smaller than all */
				l = -1;
				x->corrupt = false;
			}
			mine = &x->label[x->parent[e->v]];
			if (l < *mine) {
				*mine = l;
				changed = 1;
			}
		}
		rounds++;
	} while (rr_allor(&x->rr, changed));
	return rounds;
}

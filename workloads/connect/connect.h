/* SPDX-License-Identifier: MIT */
/*
 * connect.h: connected components of a distributed random graph.
 *
 * TOTAL vertices split over the ranks in contiguous blocks (the first
 * TOTAL mod N ranks get one more; with TOTAL < N the last ranks own none).
 * Vertex v draws EDGES/100 undirected edges on average (the integer part
 * always, one more with the fractional part as probability); each edge leads
 * to another rank that owns vertices with probability REMOTE %, else to a
 * vertex of the own rank.  Everything is a hash of (seed, vertex, edge), so
 * every rank and rank 0's serial union-find build the same graph.  The label
 * of a component is its smallest global vertex index.
 */
#ifndef CONNECT_H
#define CONNECT_H

#include <stdbool.h>
#include <stdint.h>

#include "wl_part.h"
#include "wl_rr.h"
#include "wl.h"

#define CC_EDGES_MAX	16	/* edges a vertex may draw */

struct cc_graph {
	uint64_t seed;
	int64_t total;
	int nranks;
	int edges_pct;		/* edges per vertex, in percent */
	int remote_pct;
};

/* An edge of an own vertex to a vertex of another rank. */
struct cc_remote {
	int64_t v;		/* own local index */
	int64_t idx;		/* owner-local index of the other end */
	int owner;
};

struct cc_ctx {
	const struct wl_prog *p;
	struct cc_graph g;
	int64_t lo, n;		/* owned vertices: global [lo, lo + n) */
	int64_t *ledge;		/* local edges as pairs of local indices */
	int64_t nledge;
	struct cc_remote *rem;	/* both directions: every remote neighbour */
	int64_t nrem;
	int64_t *parent;	/* local union-find, then each vertex's root */
	int64_t *label;		/* by local root: the component's label so far */
	struct rr rr;
	bool corrupt;		/* this rank damages its first read label */
};

/* cc_graph.c */
int cc_vertex_edges(const struct cc_graph *g, int64_t v, int64_t *dst);
int cc_graph_build(struct cc_ctx *x);
void cc_graph_free(struct cc_ctx *x);
int cc_serial(const struct cc_graph *g, const int64_t *got, int64_t *bad,
	      int64_t *first_bad, int64_t *first_want, int64_t *components);

/* cc_run.c */
int64_t cc_run(struct cc_ctx *x, struct wl_msgs *m);
int64_t cc_label(const struct cc_ctx *x, int64_t i);

#endif /* CONNECT_H */

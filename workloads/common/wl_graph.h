/* SPDX-License-Identifier: MIT */
/*
 * wl_graph.h: drawing the edges of the random graphs (connect, em3d).
 *
 * A graph is a function of its seed: vertex v's edges come from a per-vertex
 * key (the program derives it from the seed and v, with its own constants),
 * so any rank can draw any vertex's edges without communication.  Vertices
 * are block-split over the ranks (wl_part.h); an edge stays on its own
 * vertex's rank, or with probability remote_pct % goes to one of the other
 * ranks that own vertices (uniformly), and then to a uniform vertex of that
 * rank's block.
 */
#ifndef WL_GRAPH_H
#define WL_GRAPH_H

#include <stdint.h>

struct wl_graph_shape {
	int64_t total;		/* vertices in all */
	int nranks;
	int remote_pct;		/* 0..100: share of edges to another rank */
};

/*
 * The other end (global index) of edge k (k >= 0) of the vertex with the
 * given key, owned by rank own.  *h, when non-NULL, receives the edge's
 * first hash word for callers that draw more from it (em3d's weights).
 */
int64_t wl_graph_edge(const struct wl_graph_shape *s, uint64_t key, int own, int k,
		      uint64_t *h);

#endif /* WL_GRAPH_H */

/* SPDX-License-Identifier: MIT */
/*
 * em3d.h: the EM3D kernel's graph, its distribution and its two modes.
 *
 * Two kinds of nodes, E (0) and H (1), TOTAL of each, split over the ranks
 * in contiguous blocks (the first TOTAL mod N ranks get one more; with
 * TOTAL < N the last ranks own none).  Every node has DEGREE edges to nodes
 * of the other kind; each edge leads off-rank with probability REMOTE %
 * (to a uniformly chosen other rank that owns nodes), else to a uniformly
 * chosen node of the own rank.  Edges and weights are a hash of (seed,
 * kind, node, edge), so any rank, and rank 0's serial reference, builds the
 * same graph without communication.  One iteration updates every E node
 * from its H neighbours, then every H node from its E neighbours:
 *
 *	v = v / 2 + sum_k w_k u_k / 2,	w_k > 0, sum_k w_k = 1
 *
 * a convex combination, so the field stays within its initial range for any
 * number of iterations (the original e -= sum c h with random c grows or
 * decays geometrically, which would leave nothing to check after a few
 * hundred iterations).
 */
#ifndef EM3D_H
#define EM3D_H

#include <stdbool.h>
#include <stdint.h>

#include <mpi.h>

#include "wl_part.h"
#include "wl_rr.h"
#include "wl.h"

#define EM_E		0
#define EM_H		1
#define EM_DEGREE_MAX	64

enum em_mode {
	EM_WRITE,	/* push boundary values one-way, then wait for ours */
	EM_READ,	/* blocking request/reply per remote edge */
};

/* What every rank and the serial reference need to build the graph. */
struct em_graph {
	uint64_t seed;
	int64_t total;		/* nodes of each kind */
	int nranks;
	int degree;
	int remote_pct;
};

/* Values of one kind that one rank exchanges with the others. */
struct em_xfer {
	int64_t *cnt;		/* per peer rank */
	int64_t *off;		/* per peer rank, into idx */
	int64_t *idx;		/* owner-local node indices, by peer, ascending */
	int64_t n;		/* sum of cnt */
};

/* One rank's share. */
struct em_ctx {
	const struct wl_prog *p;
	struct em_graph g;
	enum em_mode mode;
	int64_t gran;		/* values per message (write mode) */
	int64_t lo, n;		/* owned nodes of each kind: global [lo, lo + n) */
	double *val[2];		/* owned values by kind */
	int64_t *ref[2];	/* per edge of a kind-k node: local index of the
				 * kind 1-k value, or -1 - ghost slot */
	double *w[2];		/* per edge: weight */
	int64_t reads[2];	/* edges of kind-k nodes with ghost sources */
	/*
	 * ghost[k]: the distinct remote kind-k values this rank reads, sorted
	 * by (owner, index) (idx holds the owner's local index); send[k]: the
	 * own kind-k nodes each other rank reads, in that rank's ghost order.
	 */
	struct em_xfer ghost[2], send[2];
	double *gval[2];	/* ghost values, by slot */
	int *gown[2];		/* ghost owner rank, by slot */
	double *sbuf;		/* packed outgoing values */
	MPI_Request *reqs;
	struct rr rr;
	bool corrupt;		/* this rank damages one received value */
	bool armed;		/* ... at its next receive */
};

/* em3d_graph.c */
void em_node_edges(const struct em_graph *g, int kind, int64_t node,
		   int64_t *dst, double *w);
double em_init_value(const struct em_graph *g, int kind, int64_t node);
int em_graph_build(struct em_ctx *x);
void em_graph_free(struct em_ctx *x);
int em_serial(const struct em_graph *g, int64_t iters, const double *got_e,
	      const double *got_h, double *maxerr);

/* em3d_run.c */
void em_update(struct em_ctx *x, int kind);
void em_push(struct em_ctx *x, int kind, struct wl_msgs *m);
void em_run(struct em_ctx *x, int64_t iters, struct wl_msgs *m);

#endif /* EM3D_H */

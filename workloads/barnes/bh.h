/* SPDX-License-Identifier: MIT */
/*
 * bh.h: what the files of barnes share.
 *
 * barnes is a 3-D Barnes-Hut n-body code in the style of the Split-C Barnes
 * of Martin et al.: every rank builds an octree of its own bodies, the
 * global tree is the set of per-rank roots, and the force walk reads remote
 * cells on demand by (rank, cell id) with a blocking two-sided
 * request/reply, keeping them in a per-rank software cache for the step.
 *
 * - bh_body.c: initial conditions (a function of seed and body index),
 *   the spatial partition, the softened pair force, the direct O(n^2)
 *   reference of the check.
 * - bh_tree.c: the local octree and its wire form.
 * - bh_remote.c: remote reads, the cache, serving other ranks' requests,
 *   the end of a step.
 * - bh_force.c: the force walk over every rank's tree.
 *
 * The wire form is the in-memory form (MPI_BYTE): ranks must share one
 * ABI, as on any homogeneous cluster.  Functions return 0 or a negative
 * errno; nothing here exits.
 */
#ifndef BH_H
#define BH_H

#include <stdbool.h>
#include <stdint.h>

#include <mpi.h>

#include "wl.h"
#include "wl_part.h"

#define BH_LEAF		8	/* bodies per leaf cell at most */
#define BH_DEPTH_MAX	60	/* deeper means bodies (nearly) coincide */
#define BH_EPS		0.05	/* Plummer softening length */
#define BH_DT		0.025	/* time step (SPLASH-2 Barnes's default) */
#define BH_TAG_REQ	41	/* + step parity: a request of that step */
#define BH_TAG_REPLY	43

enum bh_dist {
	BH_DIST_PLUMMER,
	BH_DIST_UNIFORM,
};

/* A local body. */
struct bh_body {
	double pos[3], vel[3], acc[3];
	double phi;		/* potential at pos, for the energy */
	double mass;
	int64_t id;		/* global index: initial state and self-skip */
};

/* A body as a leaf cell carries it (tree order). */
struct bh_wbody {
	double pos[3];
	double mass;
	int64_t id;
};

/* A cell as the wire carries it; a reply is the header and nbody bodies. */
struct bh_hdr {
	double com[3];
	double mass;
	double center[3];	/* the cube is center +- half */
	double half;
	int32_t child[8];	/* cell ids, -1 for none; all -1 in a leaf */
	int32_t nbody;		/* bodies of a leaf, 0 in an internal cell */
	int32_t ncell;		/* cells of the owner's tree: sizes the cache */
};

/* A whole cell: what a reply may carry at most. */
struct bh_rec {
	struct bh_hdr h;
	struct bh_wbody b[BH_LEAF];
};

/* What the walk needs of a cell, wherever it is. */
struct bh_view {
	const struct bh_hdr *h;
	const struct bh_wbody *b;
};

/* The request of a remote read. */
struct bh_req {
	int32_t cell;
	int32_t step;
};

struct bh_cell {
	struct bh_hdr h;
	int32_t first;		/* a leaf's bodies: wb[first, first + nbody) */
};

/* One rank's octree; cell 0 is the root when nb > 0. */
struct bh_tree {
	struct bh_cell *cell;
	int32_t ncell, cap;
	struct bh_wbody *wb;	/* bodies in tree order */
	int32_t nb;
	int32_t *idx, *tmp;	/* build scratch */
	int32_t capb;		/* bodies wb, idx and tmp can hold */
};

/* Remote reads, the cache and their counts; one per rank. */
struct bh_remote {
	const struct wl_prog *p;
	const struct bh_tree *tree;	/* served to other ranks */
	struct wl_msgs *m;		/* where messages are counted */
	bool cache_on;
	bool corrupt;			/* -X: damage the next body received */
	int32_t step;
	/* cache: slot[r][cell] indexes pool, -1 when absent */
	int32_t **slot;
	int32_t *nslot;
	struct bh_rec *pool;
	int64_t npool, cappool;
	struct bh_rec scratch;		/* the one cell of a read without cache */
	struct bh_rec reply;		/* the reply being sent */
	/* counts of the timed steps (bh_remote_count) */
	int64_t hits, misses;
	int64_t reply_bytes;		/* bytes of the replies this rank received */
	bool counting;
};

/* bh_body.c */
void bh_body_init(enum bh_dist dist, uint64_t seed, int64_t g, double pos[3],
		  double vel[3]);
int bh_body_setup(enum bh_dist dist, uint64_t seed, int64_t total, int64_t lo,
		  int64_t n, struct bh_body *b);
void bh_body_all(enum bh_dist dist, uint64_t seed, int64_t total,
		 double (*pos)[3], double (*vel)[3]);
void bh_pair(const double p[3], const double q[3], double m, double acc[3],
	     double *phi);
void bh_direct(const double (*pos)[3], int64_t n, double mass, double (*acc)[3],
	       double *asum);

/* bh_tree.c */
int bh_tree_build(struct bh_tree *t, const struct bh_body *b, int32_t n);
void bh_tree_fini(struct bh_tree *t);
void bh_tree_view(const struct bh_tree *t, int32_t c, struct bh_view *v);
size_t bh_tree_pack(const struct bh_tree *t, int32_t c, struct bh_rec *out);

/* bh_remote.c */
int bh_remote_init(struct bh_remote *x, const struct wl_prog *p, bool cache_on);
void bh_remote_fini(struct bh_remote *x);
void bh_remote_begin(struct bh_remote *x, const struct bh_tree *t, int32_t step,
		     struct wl_msgs *m, bool counting);
int bh_remote_get(struct bh_remote *x, int r, int32_t c, struct bh_view *v);
int bh_remote_serve(struct bh_remote *x);
int bh_remote_end(struct bh_remote *x);

/* bh_force.c */
int bh_force(struct bh_remote *x, const int64_t *counts, struct bh_body *b,
	     int32_t n, double theta);

#endif /* BH_H */

/* SPDX-License-Identifier: MIT */
/*
 * connect: connected components of a distributed random graph by label
 * propagation with blocking remote reads (Split-C's Connect): a local
 * union-find, then rounds of reading every remote neighbour's label until
 * no label changes anywhere.  The graph is in connect.h, the rounds in
 * cc_run.c, the remote reads in rr.c.
 *
 *   mpirun -np N connect [-n VERTICES | -N TOTAL] [-e EDGES%] [-r REMOTE%]
 *                        [-s SEED] [-c auto|serial|edges] [-X] [-h]
 *
 * Validation: rank 0 gathers every vertex's label and runs a serial
 * union-find over the same graph: every label must be the smallest vertex
 * of its component, and the component counts must agree.  Above
 * CC_SERIAL_MAX vertices (or with -c edges) the check is distributed and
 * untimed instead: one more read of every remote neighbour must return the
 * own label, and no label may exceed its vertex.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "connect.h"

#define CC_VERTICES	25000
#define CC_EDGES	80
#define CC_REMOTE	20
#define CC_TOTAL_MAX	(1LL << 36)
#define CC_SERIAL_MAX	(1LL << 24)	/* vertices rank 0 may check */
#define CC_TAG_WARM	59

enum cc_check { CC_CHECK_AUTO, CC_CHECK_SERIAL, CC_CHECK_EDGES };

static const char *const cc_check_names[] = { "auto", "serial", "edges" };

struct cc_opts {
	int64_t vertices, total, edges, remote, seed;
	enum cc_check check;
	bool corrupt;
};

static const char cc_usage[] =
	"usage: mpirun -np N connect [-n VERTICES | -N TOTAL] [-e EDGES] [-r REMOTE]\n"
	"                            [-s SEED] [-c auto|serial|edges] [-X] [-h]\n"
	"  -n, --vertices V   vertices per rank (default 25000)\n"
	"  -N, --total TOTAL  vertices in all, split as evenly as possible\n"
	"                     (overrides -n; may be < N: idle ranks)\n"
	"  -e, --edges PCT    undirected edges drawn per vertex, in percent,\n"
	"                     0..1500 (default 80: average degree 1.6)\n"
	"  -r, --remote PCT   percent of edges to another rank (default 20)\n"
	"  -s, --seed SEED    the graph (default 1)\n"
	"  -c, --check CHECK  serial: rank 0 runs a union-find and compares every\n"
	"                     label; edges: labels agree across every edge;\n"
	"                     auto (default): serial up to 2^24 vertices\n"
	"  -X                 testing: the first label read is damaged, which the\n"
	"                     check must catch (valid: false)\n"
	"  -h, --help         this help\n"
	"Prints one JSON result line (docs/results.md): metrics time_s, rounds,\n"
	"components, remote_edges (remote neighbours, all ranks: reads per round).\n";

static const struct option cc_long[] = {
	{ "vertices", required_argument, NULL, 'n' },
	{ "total", required_argument, NULL, 'N' },
	{ "edges", required_argument, NULL, 'e' },
	{ "remote", required_argument, NULL, 'r' },
	{ "seed", required_argument, NULL, 's' },
	{ "check", required_argument, NULL, 'c' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* 0: run; 1: help shown; -EINVAL: bad options (reported by rank 0). */
static int cc_opt(const struct wl_prog *p, int c, const char *arg, void *ctx)
{
	struct cc_opts *o = ctx;
	int ret, word = 0;

	switch (c) {
	case 'n':
		ret = wl_opt_int(p, c, arg, 1, CC_TOTAL_MAX, &o->vertices);
		break;
	case 'N':
		ret = wl_opt_int(p, c, arg, 1, CC_TOTAL_MAX, &o->total);
		break;
	case 'e':
		ret = wl_opt_int(p, c, arg, 0, (CC_EDGES_MAX - 1) * 100, &o->edges);
		break;
	case 'r':
		ret = wl_opt_int(p, c, arg, 0, 100, &o->remote);
		break;
	case 's':
		ret = wl_opt_int(p, c, arg, 0, INT64_MAX, &o->seed);
		break;
	case 'c':
		ret = wl_opt_word(p, c, arg, cc_check_names, 3, "auto, serial or edges", &word);
		o->check = (enum cc_check)word;
		break;
	case 'X':
		o->corrupt = true;
		ret = 0;
		break;
	default:
		return wl_opt_unknown(p, c);
	}
	return ret;
}

static int cc_parse(const struct wl_prog *p, int argc, char **argv, struct cc_opts *o)
{
	int ret;

	ret = wl_opt_getopt(p, argc, argv, ":n:N:e:r:s:c:Xh", cc_long, cc_usage, cc_opt, o);
	if (ret)
		return ret;
	if (!o->total && wl_opt_per_rank(p, 'n', o->vertices, CC_TOTAL_MAX, "vertices"))
		return -EINVAL;
	return 0;
}

static int64_t cc_serve(void *arg, int64_t key)
{
	const struct cc_ctx *x = arg;

	return cc_label(x, key);
}

/* Untimed: one message each way with every rank that shares an edge
 * (ofi_rxm connects on first use), and one barrier of rr.c. */
static void cc_warmup(struct cc_ctx *x, struct wl_msgs *warm)
{
	int r, nreq = 0, me = x->p->rank, nr = x->g.nranks;
	int32_t out = me, *in;
	MPI_Request *reqs;
	char *peer;
	int64_t i;

	in = malloc(sizeof(*in) * (size_t)nr);
	peer = calloc((size_t)nr, 1);
	reqs = malloc(sizeof(*reqs) * 2 * (size_t)nr);
	for (i = 0; peer && i < x->nrem; i++)
		peer[x->rem[i].owner] = 1;	/* symmetric: edges are in both lists */
	for (r = 0; in && peer && reqs && r < nr; r++) {
		if (!peer[r])
			continue;
		MPI_Irecv(&in[r], 1, MPI_INT32_T, r, CC_TAG_WARM, MPI_COMM_WORLD, &reqs[nreq++]);
		MPI_Isend(&out, 1, MPI_INT32_T, r, CC_TAG_WARM, MPI_COMM_WORLD, &reqs[nreq++]);
	}
	/* without buffers only the connection set-up is skipped */
	MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);
	free(in);
	free(peer);
	free(reqs);
	x->rr.msgs = warm;
	rr_allor(&x->rr, 0);
}

/* Serial check; collective.  1 ok, 0 wrong, <0 out of memory on rank 0. */
static int cc_check_serial(struct cc_ctx *x, int64_t components)
{
	int *counts = NULL, *displs = NULL, i, ok = 0, ret = 0, alloc_ok = 1;
	int64_t *all = NULL, *mine, lo, n, bad = 0, first = -1, want = -1, comps = 0, v;

	mine = malloc(sizeof(*mine) * (size_t)(x->n + 1));
	if (!x->p->rank) {
		counts = malloc(sizeof(*counts) * (size_t)x->p->nranks);
		displs = malloc(sizeof(*displs) * (size_t)x->p->nranks);
		all = malloc(sizeof(*all) * (size_t)x->g.total);
		alloc_ok = counts && displs && all;
		for (i = 0; alloc_ok && i < x->p->nranks; i++) {
			wl_part(x->g.total, x->p->nranks, i, &lo, &n);
			counts[i] = (int)n;
			displs[i] = (int)lo;
		}
	}
	alloc_ok = alloc_ok && mine;
	MPI_Allreduce(MPI_IN_PLACE, &alloc_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	if (!alloc_ok) {
		ret = -ENOMEM;
		goto out;
	}
	for (v = 0; v < x->n; v++)
		mine[v] = cc_label(x, v);
	MPI_Gatherv(mine, (int)x->n, MPI_INT64_T, all, counts, displs, MPI_INT64_T, 0,
		    MPI_COMM_WORLD);
	if (!x->p->rank) {
		ret = cc_serial(&x->g, all, &bad, &first, &want, &comps);
		if (ret)
			goto out;
		ok = !bad && comps == components;
		if (bad)
			fprintf(stderr, "connect: %lld of %lld labels differ from the serial union-find, first vertex %lld: %lld instead of %lld\n",
				(long long)bad, (long long)x->g.total, (long long)first,
				(long long)all[first], (long long)want);
		if (comps != components)
			fprintf(stderr, "connect: %lld components, the serial union-find finds %lld\n",
				(long long)components, (long long)comps);
	}
out:
	free(mine);
	free(counts);
	free(displs);
	free(all);
	if (!x->p->rank && ret)
		ok = ret;
	MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
	return ok;
}

/* Distributed check (untimed, rr still open): labels agree across every
 * remote edge (local ones share a root) and never exceed their vertex. */
static int cc_check_edges(struct cc_ctx *x, struct wl_msgs *scratch)
{
	int64_t i, bad = 0, all_bad;

	x->rr.msgs = scratch;
	for (i = 0; i < x->n; i++)
		bad += cc_label(x, i) > x->lo + i || cc_label(x, i) < 0;
	for (i = 0; i < x->nrem; i++)
		bad += rr_read(&x->rr, x->rem[i].owner, x->rem[i].idx) !=
		       cc_label(x, x->rem[i].v);
	rr_allor(&x->rr, 0);	/* nobody reads labels after this */
	MPI_Allreduce(&bad, &all_bad, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	if (all_bad && !x->p->rank)
		fprintf(stderr, "connect: %lld labels exceed their vertex or differ across an edge\n",
			(long long)all_bad);
	return !all_bad;
}

int main(int argc, char **argv)
{
	struct wl_prog p = {
		.name = "connect",
		.options = "-n VERTICES, -N TOTAL, -e EDGES, -r REMOTE, -s SEED, -c CHECK, -X, -h",
	};
	struct cc_opts o = {
		.vertices = CC_VERTICES, .edges = CC_EDGES, .remote = CC_REMOTE, .seed = 1,
	};
	struct cc_ctx x = { .p = &p };
	struct wl_msgs m = { 0 }, warm = { 0 };
	int64_t rounds, v[2], sums[2], most, i;
	struct wl_critical crit;
	struct wl_result r;
	int ret, ok, lowest, mine, b;
	double t0, t;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p.nranks);
	ret = cc_parse(&p, argc, argv, &o);
	if (ret) {
		MPI_Finalize();
		return ret > 0 ? 0 : WL_EXIT_USAGE;
	}
	x.g = (struct cc_graph){
		.seed = (uint64_t)o.seed, .total = o.total ? o.total : o.vertices * p.nranks,
		.nranks = p.nranks, .edges_pct = (int)o.edges, .remote_pct = (int)o.remote,
	};
	if (cc_graph_build(&x)) {
		fprintf(stderr, "connect: rank %d: out of memory for the graph\n", p.rank);
		goto err;
	}
	/* -X: the lowest rank that reads anything damages its first read */
	mine = o.corrupt && x.nrem ? p.rank : p.nranks;
	MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	rr_open(&x.rr, MPI_COMM_WORLD, cc_serve, &x, &warm);
	/* labels must be servable before the warm-up's barrier serves reads */
	for (i = 0; i < x.n; i++) {
		x.parent[i] = i;
		x.label[i] = x.lo + i;
	}
	cc_warmup(&x, &warm);
	x.corrupt = lowest == p.rank;

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	rounds = cc_run(&x, &m);
	t = MPI_Wtime() - t0;

	v[0] = 0;	/* components: vertices that are their own label */
	for (i = 0; i < x.n; i++)
		v[0] += cc_label(&x, i) == x.lo + i;
	v[1] = x.nrem;
	MPI_Allreduce(v, sums, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	if (o.check == CC_CHECK_AUTO)
		o.check = x.g.total <= CC_SERIAL_MAX ? CC_CHECK_SERIAL : CC_CHECK_EDGES;
	if (o.check == CC_CHECK_SERIAL) {
		ok = cc_check_serial(&x, sums[0]);
		if (ok < 0) {
			if (!p.rank)
				fprintf(stderr, "connect: out of memory for the serial check\n");
			goto err;
		}
	} else {
		ok = cc_check_edges(&x, &warm);
	}
	x.rr.msgs = &warm;
	rr_close(&x.rr);
	/*
	 * Every remote read is a round trip and the next read waits for it: 2
	 * latencies, a send and a receive overhead at each end (the reader's
	 * request, the owner's reply) and 16 bytes through the two ports, per
	 * read of the rank with the most remote neighbours, every round; each
	 * round's barrier adds ceil(log2 N) messages of 4 bytes in sequence.
	 * The o_r + o_s an owner spends serving others interleaves with its own
	 * waits and is not counted.  The local union-find sends nothing.
	 */
	MPI_Allreduce(&x.nrem, &most, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
	b = rr_rounds(p.nranks);
	crit = (struct wl_critical){
		.path = rounds * (2 * most + b), .sends = rounds * (2 * most + b),
		.recvs = rounds * (2 * most + b), .bytes = rounds * (16 * most + 4 * b),
	};
	if (wl_result_reduce(&p, ok, t, &m, &crit, &r)) {
		fprintf(stderr, "connect: rank %d: out of memory for the result\n", p.rank);
		goto err;
	}
	if (!p.rank) {
		struct wl_metric metrics[] = {
			{ "rounds", (double)rounds },
			{ "components", (double)sums[0] },
			{ "remote_edges", (double)sums[1] },
		};
		struct wl_param params[] = {
			{ "vertices", x.g.total, NULL },
			{ "edges_pct", o.edges, NULL },
			{ "remote_pct", o.remote, NULL },
			{ "seed", o.seed, NULL },
			{ "check", 0, cc_check_names[o.check] },
		};

		wl_result_print(stdout, &p, &r, metrics, 3, params, 5);
	}
	wl_result_fini(&r);
	cc_graph_free(&x);
	MPI_Finalize();
	return 0;
err:
	cc_graph_free(&x);
	MPI_Abort(MPI_COMM_WORLD, 1);
	return 1;
}

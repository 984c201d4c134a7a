/* SPDX-License-Identifier: MIT */
/*
 * em3d: the EM3D electromagnetic kernel (Culler et al., Split-C) on a
 * bipartite graph of E and H nodes spread over the ranks, in write mode
 * (one-way stores of boundary values) or read mode (a blocking round trip
 * per remote edge).  The graph and the update are in em3d.h, the modes in
 * em3d_run.c, the remote reads in rr.c.
 *
 *   mpirun -np N em3d [-m write|read] [-n NODES | -N TOTAL] [-d DEGREE]
 *                     [-r REMOTE%] [-i ITERS] [-s SEED] [-g VALUES]
 *                     [-c auto|serial|range] [-X] [-h]
 *
 * Validation: rank 0 gathers both fields and recomputes them serially from
 * the same seed (same sums in the same order, so they agree to the last bit;
 * the tolerance is 1e-12).  Where that would be too costly (or -c range) the
 * check is the convex combination's invariant instead: every value finite
 * and within the initial range.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "em3d.h"

#define EM_NODES	500
#define EM_DEGREE	8
#define EM_REMOTE	20
#define EM_ITERS_WRITE	400
#define EM_ITERS_READ	40
#define EM_TOTAL_MAX	(1LL << 32)
#define EM_SERIAL_WORK	(1LL << 28)	/* edge updates of the serial check */
#define EM_SERIAL_EDGES	(1LL << 24)	/* edges rank 0 may hold */
#define EM_TOL		1e-12
#define EM_TAG_WARM	49

enum em_check { EM_CHECK_AUTO, EM_CHECK_SERIAL, EM_CHECK_RANGE };

static const char *const em_check_names[] = { "auto", "serial", "range" };
static const char *const em_mode_names[] = { "write", "read" };

struct em_opts {
	enum em_mode mode;
	int64_t nodes, total, degree, remote, iters, seed, gran;
	enum em_check check;
	bool corrupt;
};

static const char em_usage[] =
	"usage: mpirun -np N em3d [-m write|read] [-n NODES | -N TOTAL] [-d DEGREE]\n"
	"                         [-r REMOTE] [-i ITERS] [-s SEED] [-g VALUES]\n"
	"                         [-c auto|serial|range] [-X] [-h]\n"
	"  -m, --mode MODE    write: push boundary values one-way, then wait for\n"
	"                     the own ghosts (default); read: a blocking\n"
	"                     request/reply round trip per remote edge\n"
	"  -n, --nodes NODES  E nodes and H nodes per rank (default 500)\n"
	"  -N, --total TOTAL  E nodes and H nodes in all, split as evenly as\n"
	"                     possible (overrides -n; may be < N: idle ranks)\n"
	"  -d, --degree D     edges per node, 1..64 (default 8)\n"
	"  -r, --remote PCT   percent of edges to another rank (default 20)\n"
	"  -i, --iters ITERS  timed iterations (default 400 write, 40 read)\n"
	"  -s, --seed SEED    graph and initial values (default 1)\n"
	"  -g, --values V     write mode: values per store message (default 1, one\n"
	"                     store per value as in the study; large = bulk)\n"
	"  -c, --check CHECK  serial: rank 0 recomputes both fields; range: every\n"
	"                     value stays in the initial range; auto (default):\n"
	"                     serial where cheap\n"
	"  -X                 testing: damage one value received in the last\n"
	"                     iteration, which the check must catch (valid: false)\n"
	"  -h, --help         this help\n"
	"Prints one JSON result line (docs/results.md): metrics time_s, iter_us,\n"
	"remote_edges and ghost_values (per iteration, all ranks).\n";

static const struct option em_long[] = {
	{ "mode", required_argument, NULL, 'm' },
	{ "nodes", required_argument, NULL, 'n' },
	{ "total", required_argument, NULL, 'N' },
	{ "degree", required_argument, NULL, 'd' },
	{ "remote", required_argument, NULL, 'r' },
	{ "iters", required_argument, NULL, 'i' },
	{ "seed", required_argument, NULL, 's' },
	{ "values", required_argument, NULL, 'g' },
	{ "check", required_argument, NULL, 'c' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* 0: run; 1: help shown; -EINVAL: bad options (reported by rank 0). */
static int em_opt(const struct wl_prog *p, int c, const char *arg, void *ctx)
{
	struct em_opts *o = ctx;
	int ret, word = 0;

	switch (c) {
	case 'm':
		ret = wl_opt_word(p, c, arg, em_mode_names, 2, "write or read", &word);
		o->mode = (enum em_mode)word;
		break;
	case 'n':
		ret = wl_opt_int(p, c, arg, 1, EM_TOTAL_MAX, &o->nodes);
		break;
	case 'N':
		ret = wl_opt_int(p, c, arg, 1, EM_TOTAL_MAX, &o->total);
		break;
	case 'd':
		ret = wl_opt_int(p, c, arg, 1, EM_DEGREE_MAX, &o->degree);
		break;
	case 'r':
		ret = wl_opt_int(p, c, arg, 0, 100, &o->remote);
		break;
	case 'i':
		ret = wl_opt_int(p, c, arg, 1, 1000000000, &o->iters);
		break;
	case 's':
		ret = wl_opt_int(p, c, arg, 0, INT64_MAX, &o->seed);
		break;
	case 'g':
		ret = wl_opt_int(p, c, arg, 1, 1 << 24, &o->gran);
		break;
	case 'c':
		ret = wl_opt_word(p, c, arg, em_check_names, 3,
				  "auto, serial or range", &word);
		o->check = (enum em_check)word;
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

static int em_parse(const struct wl_prog *p, int argc, char **argv, struct em_opts *o)
{
	int ret;

	ret = wl_opt_getopt(p, argc, argv, ":m:n:N:d:r:i:s:g:c:Xh", em_long, em_usage, em_opt, o);
	if (ret)
		return ret;
	if (!o->iters)	/* -i not given */
		o->iters = o->mode == EM_READ ? EM_ITERS_READ : EM_ITERS_WRITE;
	if (!o->total && wl_opt_per_rank(p, 'n', o->nodes, EM_TOTAL_MAX, "nodes of each kind"))
		return -EINVAL;
	return 0;
}

static int64_t em_serve(void *arg, int64_t key)
{
	const struct em_ctx *x = arg;
	int64_t bits;

	memcpy(&bits, &x->val[key & 1][key >> 1], sizeof(bits));
	return bits;
}

/*
 * Untimed: one message each way with every rank this one exchanges values
 * with (ofi_rxm connects on first use), and in write mode the first H
 * values into the ghosts, which the first E update reads.
 */
static void em_warmup(struct em_ctx *x, struct wl_msgs *warm)
{
	int r, nreq = 0, me = x->p->rank;
	int32_t out = me, *in;
	MPI_Request *reqs;

	in = malloc(sizeof(*in) * (size_t)x->g.nranks);
	reqs = malloc(sizeof(*reqs) * 2 * (size_t)x->g.nranks);
	for (r = 0; in && reqs && r < x->g.nranks; r++) {
		if (r == me || !(x->ghost[0].cnt[r] + x->ghost[1].cnt[r] +
				 x->send[0].cnt[r] + x->send[1].cnt[r]))
			continue;
		MPI_Irecv(&in[r], 1, MPI_INT32_T, r, EM_TAG_WARM, MPI_COMM_WORLD, &reqs[nreq++]);
		MPI_Isend(&out, 1, MPI_INT32_T, r, EM_TAG_WARM, MPI_COMM_WORLD, &reqs[nreq++]);
	}
	/* without buffers only the connection set-up is skipped */
	MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);
	free(in);
	free(reqs);
	if (x->mode == EM_WRITE) {
		em_push(x, EM_H, warm);
	} else {
		x->rr.msgs = warm;
		rr_allor(&x->rr, 0);
	}
}

/* The lowest rank whose corruption reaches the result damages one value. */
static void em_pick_corrupt(struct em_ctx *x, bool corrupt)
{
	int mine = x->p->nranks, lowest;
	bool can = x->mode == EM_WRITE ? x->ghost[EM_E].n > 0 :
		   x->reads[EM_E] + x->reads[EM_H] > 0;

	if (corrupt && can)
		mine = x->p->rank;
	MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	x->corrupt = lowest == x->p->rank;
}

/* Serial check; collective.  1 ok, 0 wrong, <0 out of memory on rank 0. */
static int em_check_serial(struct em_ctx *x, int64_t iters)
{
	int *counts = NULL, *displs = NULL, i, ok = 0, ret = 0, alloc_ok = 1, k;
	double *all[2] = { NULL, NULL }, maxerr;
	int64_t lo, n;

	if (!x->p->rank) {
		counts = malloc(sizeof(*counts) * (size_t)x->p->nranks);
		displs = malloc(sizeof(*displs) * (size_t)x->p->nranks);
		all[0] = malloc(sizeof(double) * (size_t)x->g.total);
		all[1] = malloc(sizeof(double) * (size_t)x->g.total);
		alloc_ok = counts && displs && all[0] && all[1];
		for (i = 0; alloc_ok && i < x->p->nranks; i++) {
			wl_part(x->g.total, x->p->nranks, i, &lo, &n);
			counts[i] = (int)n;
			displs[i] = (int)lo;
		}
	}
	/* every rank learns whether rank 0 can take the gather */
	MPI_Bcast(&alloc_ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (!alloc_ok) {
		ret = -ENOMEM;
		goto out;
	}
	for (k = 0; k < 2; k++)
		MPI_Gatherv(x->val[k], (int)x->n, MPI_DOUBLE, all[k], counts, displs,
			    MPI_DOUBLE, 0, MPI_COMM_WORLD);
	if (!x->p->rank) {
		ret = em_serial(&x->g, iters, all[0], all[1], &maxerr);
		if (ret)
			goto out;
		ok = maxerr <= EM_TOL;
		if (!ok)
			fprintf(stderr, "em3d: fields differ from the serial recomputation by up to %g (tolerance %g)\n",
				maxerr, EM_TOL);
	}
out:
	free(counts);
	free(displs);
	free(all[0]);
	free(all[1]);
	if (!x->p->rank && ret)
		ok = ret;
	MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
	return ok;
}

/* Smallest and largest value of both fields over all ranks (NaN: +inf). */
static void em_range(const struct em_ctx *x, double *min, double *max)
{
	double lo = INFINITY, hi = -INFINITY, v;
	int64_t i;
	int k;

	for (k = 0; k < 2; k++) {
		for (i = 0; i < x->n; i++) {
			v = x->val[k][i];
			lo = fmin(lo, v);
			hi = isfinite(v) ? fmax(hi, v) : INFINITY;
		}
	}
	MPI_Allreduce(&lo, min, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
	MPI_Allreduce(&hi, max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
}

/*
 * The critical path, from the busiest rank of each half iteration (the next
 * half waits for it: for its stores in write mode, at the barrier in read
 * mode).
 *
 * Write: the stores of a half iteration travel at once and the next update
 * waits only for them: one latency per half iteration that stores anything.
 * A rank pays o_s for each store it sends and o_r for each it receives, all
 * on its own CPU before it can go on: sends and recvs are the most any rank
 * sends and receives per half iteration; bytes the most one rank injects.
 *
 * Read: every remote read is a round trip, the next read starts after it:
 * 2 latencies, and a send and a receive overhead at each end (the reader's
 * request and the owner's reply), per read of the rank with the most reads;
 * 16 bytes go through the two ports in sequence.  The barrier adds ceil(log2
 * N) rounds of one 4-byte message.  Not counted: the o_r + o_s the owner
 * spends serving other ranks' reads, which interleaves with its own waits;
 * when overhead dominates latency it lengthens the path too, so the model
 * then under-predicts (as the study found for EM3D(read)).
 */
static void em_critical(const struct em_ctx *x, int64_t iters, struct wl_critical *c)
{
	int64_t v[6] = { 0 }, mx[6];
	int64_t b = rr_rounds(x->p->nranks), gr = x->gran;
	int k, r;

	for (k = 0; k < 2; k++) {
		if (x->mode == EM_READ) {
			v[k] = x->reads[k];
			continue;
		}
		for (r = 0; r < x->p->nranks; r++) {
			v[k] += (x->send[k].cnt[r] + gr - 1) / gr;
			v[2 + k] += (x->ghost[k].cnt[r] + gr - 1) / gr;
		}
		v[4 + k] = (int64_t)sizeof(double) * x->send[k].n;
	}
	MPI_Allreduce(v, mx, 6, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
	*c = (struct wl_critical){ 0 };
	if (x->mode == EM_READ) {
		c->path = iters * (2 * (mx[0] + mx[1]) + 2 * b);
		c->sends = c->path;
		c->recvs = c->path;
		c->bytes = iters * (16 * (mx[0] + mx[1]) + 8 * b);
		return;
	}
	c->path = iters * ((mx[0] > 0) + (mx[1] > 0));
	c->sends = iters * (mx[0] + mx[1]);
	c->recvs = iters * (mx[2] + mx[3]);
	c->bytes = iters * (mx[4] + mx[5]);
}

int main(int argc, char **argv)
{
	struct wl_prog p = {
		.name = "em3d",
		.options = "-m MODE, -n NODES, -N TOTAL, -d DEGREE, -r REMOTE, -i ITERS, -s SEED, -g VALUES, -c CHECK, -X, -h",
	};
	struct em_opts o = {
		.mode = EM_WRITE, .nodes = EM_NODES, .degree = EM_DEGREE,
		.remote = EM_REMOTE, .seed = 1, .gran = 1,
	};
	struct em_ctx x = { .p = &p };
	struct wl_msgs m = { 0 }, warm = { 0 };
	int64_t stats[2], sums[2];
	double t0, t, min0, max0, min1, max1;
	struct wl_critical crit;
	struct wl_result r;
	int ret, ok;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p.nranks);
	ret = em_parse(&p, argc, argv, &o);
	if (ret) {
		MPI_Finalize();
		return ret > 0 ? 0 : WL_EXIT_USAGE;
	}
	x.g = (struct em_graph){
		.seed = (uint64_t)o.seed, .total = o.total ? o.total : o.nodes * p.nranks,
		.nranks = p.nranks, .degree = (int)o.degree, .remote_pct = (int)o.remote,
	};
	x.mode = o.mode;
	x.gran = o.gran;
	if (em_graph_build(&x)) {
		fprintf(stderr, "em3d: rank %d: out of memory for the graph\n", p.rank);
		goto err;
	}
	em_pick_corrupt(&x, o.corrupt);
	if (x.mode == EM_READ)
		rr_open(&x.rr, MPI_COMM_WORLD, em_serve, &x, &warm);
	em_range(&x, &min0, &max0);
	em_warmup(&x, &warm);

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	em_run(&x, o.iters, &m);
	t = MPI_Wtime() - t0;

	if (x.mode == EM_READ) {
		x.rr.msgs = &warm;
		rr_close(&x.rr);
	}
	if (o.check == EM_CHECK_AUTO)
		o.check = x.g.total * o.degree <= EM_SERIAL_EDGES &&
			  2 * x.g.total * o.degree * o.iters <= EM_SERIAL_WORK ?
			  EM_CHECK_SERIAL : EM_CHECK_RANGE;
	if (o.check == EM_CHECK_SERIAL) {
		ok = em_check_serial(&x, o.iters);
		if (ok < 0) {
			if (!p.rank)
				fprintf(stderr, "em3d: out of memory for the serial check\n");
			goto err;
		}
	} else {
		/* a convex combination never leaves the initial range */
		em_range(&x, &min1, &max1);
		ok = min1 >= min0 && max1 <= max0;
		if (!ok && !p.rank)
			fprintf(stderr, "em3d: field left its initial range [%g, %g]: [%g, %g]\n",
				min0, max0, min1, max1);
	}
	em_critical(&x, o.iters, &crit);
	stats[0] = x.reads[0] + x.reads[1];
	stats[1] = x.ghost[0].n + x.ghost[1].n;
	MPI_Allreduce(stats, sums, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	if (wl_result_reduce(&p, ok, t, &m, &crit, &r)) {
		fprintf(stderr, "em3d: rank %d: out of memory for the result\n", p.rank);
		goto err;
	}
	if (!p.rank) {
		struct wl_metric metrics[] = {
			{ "iter_us", r.time_s * 1e6 / (double)o.iters },
			{ "remote_edges", (double)sums[0] },
			{ "ghost_values", (double)sums[1] },
		};
		struct wl_param params[] = {
			{ "mode", 0, em_mode_names[o.mode] },
			{ "nodes", x.g.total, NULL },
			{ "degree", o.degree, NULL },
			{ "remote_pct", o.remote, NULL },
			{ "iters", o.iters, NULL },
			{ "seed", o.seed, NULL },
			{ "values_per_msg", o.gran, NULL },
			{ "check", 0, em_check_names[o.check] },
		};

		wl_result_print(stdout, &p, &r, metrics, 3, params, 8);
	}
	wl_result_fini(&r);
	em_graph_free(&x);
	MPI_Finalize();
	return 0;
err:
	em_graph_free(&x);
	MPI_Abort(MPI_COMM_WORLD, 1);
	return 1;
}

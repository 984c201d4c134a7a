/* SPDX-License-Identifier: MIT */
/*
 * stencil: 1-D Jacobi sweeps with halo exchange and compute overlap.
 *
 *   mpirun -np N stencil [-n CELLS | -N TOTAL] [-i ITERS] [-w RADIUS]
 *                        [-c auto|serial|invariants] [-X] [-h]
 *
 * A periodic field of cells, split into contiguous blocks (-n cells per
 * rank, or -N cells in all, split as evenly as possible).  Every iteration
 * is an explicit diffusion step new[i] = sum_k c_k old[i+k], k = -w..w,
 * with the binomial weights c_k = C(2w, w+k) / 4^w (all positive, summing
 * to 1, exact in binary).  Each rank posts MPI_Irecv for its two halos of
 * w doubles, MPI_Isend of its first and last w cells to its left and right
 * neighbours, updates the interior cells that need no halo, waits, then
 * updates the cells next to the halos.  With one rank the halos are copied
 * locally and no message is sent.
 *
 * Validation: rank 0 gathers the final field and recomputes it serially
 * from the initial field (a hash of the global index); every cell must
 * agree within 1e-12.  When that would cost more than ST_SERIAL_MAX cell
 * updates or ST_SERIAL_CELLS cells (or with -c invariants), the check uses
 * invariants of the scheme instead: the global sum is conserved (periodic,
 * weights sum to 1) and every cell stays within the initial minimum and
 * maximum (a convex combination); the result line names the check used.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "wl.h"
#include "wl_hash.h"
#include "wl_part.h"

#define ST_CELLS	8192
#define ST_ITERS	12000
#define ST_RADIUS	2
#define ST_RADIUS_MAX	8
#define ST_CELLS_MAX	(1LL << 30)
#define ST_SERIAL_MAX	(1LL << 29)	/* cell updates of the serial check */
#define ST_SERIAL_CELLS	(1LL << 22)	/* cells rank 0 may gather */
#define ST_TOL		1e-12
#define ST_TAG_RIGHT	31		/* halo travelling to the right */
#define ST_TAG_LEFT	32		/* halo travelling to the left */

enum st_check {
	ST_CHECK_AUTO,		/* serial where cheap, else invariants */
	ST_CHECK_SERIAL,
	ST_CHECK_INVARIANTS,
};

static const char *const st_check_names[] = { "auto", "serial", "invariants" };

struct st_opts {
	int64_t cells;		/* per rank; ignored when total > 0 */
	int64_t total;
	int64_t iters;
	int64_t radius;
	enum st_check check;
	bool corrupt;
};

/* One rank's block of the field and its halos. */
struct st_ctx {
	const struct wl_prog *p;
	int r;			/* stencil radius = halo width */
	int64_t total;
	int64_t lo, n;		/* owned cells: global [lo, lo + n) */
	int left, right;	/* neighbour ranks */
	double c[2 * ST_RADIUS_MAX + 1];
	double *u, *v;		/* n + 2r: halo, owned, halo */
	MPI_Request req[4];
};

static const char st_usage[] =
	"usage: mpirun -np N stencil [-n CELLS | -N TOTAL] [-i ITERS] [-w RADIUS]\n"
	"                            [-c auto|serial|invariants] [-X] [-h]\n"
	"  -n CELLS   cells per rank (default 8192)\n"
	"  -N TOTAL   cells in all, split as evenly as possible (overrides -n)\n"
	"  -i ITERS   timed iterations (default 12000)\n"
	"  -w RADIUS  stencil radius = doubles per halo message, 1..8 (default 2)\n"
	"  -c CHECK   serial: rank 0 recomputes the field; invariants: conserved\n"
	"             sum and range; auto: serial where cheap (default)\n"
	"  -X         testing: corrupt rank 0's left halo in the first timed\n"
	"             iteration, which the check must catch (valid: false)\n"
	"  -h         this help\n"
	"Any N >= 1; every rank needs at least RADIUS cells.  Prints one JSON\n"
	"result line (docs/results.md): metrics time_s, iter_us.\n";

static double st_init(int64_t g)
{
	return wl_unit(wl_mix64((uint64_t)g + WL_GOLDEN));
}

static void st_weights(double *c, int r)
{
	double binom = 1;
	int k;

	/* C(2r, k) / 4^r, k = 0..2r */
	for (k = 0; k <= 2 * r; k++) {
		c[k] = ldexp(binom, -2 * r);
		binom = binom * (2 * r - k) / (k + 1);
	}
}

/* dst[i] for i in [from, to) of padded arrays (halo width r). */
static void st_update(const double *restrict src, double *restrict dst,
		      const double *c, int r, int64_t from, int64_t to)
{
	int64_t i;
	int k;

	for (i = from; i < to; i++) {
		double s = 0;

		for (k = 0; k <= 2 * r; k++)
			s += c[k] * src[i - r + k];
		dst[i] = s;
	}
}

/* Periodic halos of a padded array of n cells when no neighbour is remote. */
static void st_wrap(double *u, int64_t n, int r)
{
	memcpy(u, u + n, sizeof(*u) * (size_t)r);
	memcpy(u + r + n, u + r, sizeof(*u) * (size_t)r);
}

static void st_halo_start(struct st_ctx *x, struct wl_msgs *m)
{
	size_t bytes = sizeof(double) * (size_t)x->r;
	double *u = x->u;

	if (x->p->nranks == 1) {
		st_wrap(u, x->n, x->r);
		return;
	}
	MPI_Irecv(u, x->r, MPI_DOUBLE, x->left, ST_TAG_RIGHT, MPI_COMM_WORLD, &x->req[0]);
	MPI_Irecv(u + x->r + x->n, x->r, MPI_DOUBLE, x->right, ST_TAG_LEFT,
		  MPI_COMM_WORLD, &x->req[1]);
	MPI_Isend(u + x->r, x->r, MPI_DOUBLE, x->left, ST_TAG_LEFT, MPI_COMM_WORLD, &x->req[2]);
	MPI_Isend(u + x->n, x->r, MPI_DOUBLE, x->right, ST_TAG_RIGHT, MPI_COMM_WORLD,
		  &x->req[3]);
	wl_msgs_sent(m, bytes);
	wl_msgs_sent(m, bytes);
	wl_msgs_recvd(m, bytes);
	wl_msgs_recvd(m, bytes);
}

static void st_halo_finish(struct st_ctx *x)
{
	if (x->p->nranks > 1)
		MPI_Waitall(4, x->req, MPI_STATUSES_IGNORE);
}

static void st_run(struct st_ctx *x, int64_t iters, bool corrupt, struct wl_msgs *m)
{
	int64_t r = x->r, n = x->n, it;
	int64_t mid_lo = 2 * r < r + n ? 2 * r : r + n;
	int64_t mid_hi = n > mid_lo ? n : mid_lo;
	double *t;

	for (it = 0; it < iters; it++) {
		st_halo_start(x, m);
		st_update(x->u, x->v, x->c, x->r, mid_lo, mid_hi);
		st_halo_finish(x);
		if (corrupt && it == 0 && x->p->rank == 0)
			x->u[0] += 0.25;
		st_update(x->u, x->v, x->c, x->r, r, mid_lo);
		st_update(x->u, x->v, x->c, x->r, mid_hi, r + n);
		t = x->u;
		x->u = x->v;
		x->v = t;
	}
}

/* Rank 0: recompute the gathered field serially; largest difference. */
static int st_serial(const struct st_ctx *x, const double *got, int64_t iters,
		     double *maxerr)
{
	int64_t N = x->total, r = x->r, i, it;
	double *a, *b, *t;

	a = malloc(sizeof(*a) * (size_t)(N + 2 * r));
	b = malloc(sizeof(*b) * (size_t)(N + 2 * r));
	if (!a || !b) {
		free(a);
		free(b);
		return -ENOMEM;
	}
	for (i = 0; i < N; i++)
		a[r + i] = st_init(i);
	for (it = 0; it < iters; it++) {
		st_wrap(a, N, x->r);
		st_update(a, b, x->c, x->r, r, r + N);
		t = a;
		a = b;
		b = t;
	}
	*maxerr = 0;
	for (i = 0; i < N; i++) {
		double d = fabs(a[r + i] - got[i]);

		if (!(d <= *maxerr))	/* NaN counts as the worst */
			*maxerr = isnan(d) ? INFINITY : d;
	}
	free(a);
	free(b);
	return 0;
}

/* Serial check of the final field x->u; collective.  1 ok, 0 wrong, <0 error. */
static int st_check_serial(struct st_ctx *x, int64_t iters)
{
	int *counts = NULL, *displs = NULL, i, ok = 0, ret = 0, alloc_ok = 1;
	double *all = NULL, maxerr;
	int64_t lo, n;

	if (!x->p->rank) {
		counts = malloc(sizeof(*counts) * (size_t)x->p->nranks);
		displs = malloc(sizeof(*displs) * (size_t)x->p->nranks);
		all = malloc(sizeof(*all) * (size_t)x->total);
		alloc_ok = counts && displs && all;
		for (i = 0; alloc_ok && i < x->p->nranks; i++) {
			wl_part(x->total, x->p->nranks, i, &lo, &n);
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
	MPI_Gatherv(x->u + x->r, (int)x->n, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE,
		    0, MPI_COMM_WORLD);
	if (!x->p->rank) {
		ret = st_serial(x, all, iters, &maxerr);
		if (ret)
			goto out;
		ok = maxerr <= ST_TOL;
		if (!ok)
			fprintf(stderr, "stencil: final field differs from the serial recomputation by up to %g (tolerance %g)\n",
				maxerr, ST_TOL);
	}
out:
	free(counts);
	free(displs);
	free(all);
	/* rank 0's verdict (or its failure) for everyone */
	if (!x->p->rank && ret)
		ok = ret;
	MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
	return ok;
}

/* Sum, minimum and maximum of the owned cells over all ranks. */
static void st_stats(const struct st_ctx *x, double *sum, double *min, double *max)
{
	const double *u = x->u + x->r;
	double s = 0, lo = INFINITY, hi = -INFINITY;
	int64_t i;

	for (i = 0; i < x->n; i++) {
		s += u[i];
		lo = fmin(lo, u[i]);
		hi = fmax(hi, u[i]);
		if (isnan(u[i]))
			hi = INFINITY;
	}
	MPI_Allreduce(&s, sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(&lo, min, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
	MPI_Allreduce(&hi, max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
}

static int st_opt(const struct wl_prog *p, int c, const char *arg, void *ctx)
{
	struct st_opts *o = ctx;
	int ret, word = 0;

	switch (c) {
	case 'n':
		ret = wl_opt_int(p, c, arg, 1, ST_CELLS_MAX, &o->cells);
		break;
	case 'N':
		ret = wl_opt_int(p, c, arg, 1, ST_CELLS_MAX, &o->total);
		break;
	case 'i':
		ret = wl_opt_int(p, c, arg, 1, 1000000000, &o->iters);
		break;
	case 'w':
		ret = wl_opt_int(p, c, arg, 1, ST_RADIUS_MAX, &o->radius);
		break;
	case 'c':
		ret = wl_opt_word(p, c, arg, st_check_names, 3, "auto, serial or invariants", &word);
		o->check = (enum st_check)word;
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

/* 0: run; 1: help shown; -EINVAL: bad options (reported by rank 0). */
static int st_parse(const struct wl_prog *p, int argc, char **argv, struct st_opts *o)
{
	int ret;

	ret = wl_opt_getopt(p, argc, argv, ":n:N:i:w:c:Xh", NULL, st_usage, st_opt, o);
	if (ret)
		return ret;
	if (o->total) {
		if (o->total / p->nranks < o->radius) {
			if (!p->rank)
				fprintf(stderr, "stencil: bad value %lld for -N: every rank needs at least -w %lld cells, so -N must be >= %lld with %d rank%s\n",
					(long long)o->total, (long long)o->radius,
					(long long)o->radius * p->nranks, p->nranks,
					p->nranks == 1 ? "" : "s");
			return -EINVAL;
		}
	} else if (o->cells < o->radius) {
		if (!p->rank)
			fprintf(stderr, "stencil: bad value %lld for -n: every rank needs at least -w %lld cells\n",
				(long long)o->cells, (long long)o->radius);
		return -EINVAL;
	} else if (wl_opt_per_rank(p, 'n', o->cells, ST_CELLS_MAX, "cells")) {
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct wl_prog p = {
		.name = "stencil",
		.options = "-n CELLS, -N TOTAL, -i ITERS, -w RADIUS, -c CHECK, -X, -h",
	};
	struct st_opts o = { .cells = ST_CELLS, .iters = ST_ITERS, .radius = ST_RADIUS };
	struct st_ctx x = { .p = &p };
	double sum0, min0, max0, sum1, min1, max1, t0, t, tol;
	struct wl_msgs m = { 0 }, warm = { 0 };
	struct wl_critical crit;
	struct wl_result r;
	int64_t i;
	int ret, ok;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p.nranks);
	ret = st_parse(&p, argc, argv, &o);
	if (ret) {
		MPI_Finalize();
		return ret > 0 ? 0 : WL_EXIT_USAGE;
	}
	x.r = (int)o.radius;
	x.total = o.total ? o.total : o.cells * p.nranks;
	wl_part(x.total, p.nranks, p.rank, &x.lo, &x.n);
	x.left = (p.rank - 1 + p.nranks) % p.nranks;
	x.right = (p.rank + 1) % p.nranks;
	st_weights(x.c, x.r);
	x.u = malloc(sizeof(double) * (size_t)(x.n + 2 * x.r));
	x.v = malloc(sizeof(double) * (size_t)(x.n + 2 * x.r));
	if (!x.u || !x.v) {
		fprintf(stderr, "stencil: rank %d: out of memory for 2 x %lld cells\n",
			p.rank, (long long)x.n);
		goto err;
	}
	for (i = 0; i < x.n; i++)
		x.u[x.r + i] = st_init(x.lo + i);
	/* untimed: one halo exchange sets up connections */
	st_halo_start(&x, &warm);
	st_halo_finish(&x);
	st_stats(&x, &sum0, &min0, &max0);

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	st_run(&x, o.iters, o.corrupt, &m);
	t = MPI_Wtime() - t0;

	if (o.check == ST_CHECK_AUTO)
		o.check = x.total * o.iters <= ST_SERIAL_MAX && x.total <= ST_SERIAL_CELLS ?
			  ST_CHECK_SERIAL : ST_CHECK_INVARIANTS;
	if (o.check == ST_CHECK_SERIAL) {
		ok = st_check_serial(&x, o.iters);
		if (ok < 0) {
			if (!p.rank)
				fprintf(stderr, "stencil: out of memory for the serial check\n");
			goto err;
		}
	} else {
		st_stats(&x, &sum1, &min1, &max1);
		/* rounding drift of the sum: far below this, far above a wrong halo */
		tol = (double)(o.iters * (2 * o.radius + 1) + x.total) * DBL_EPSILON * 4;
		ok = fabs(sum1 - sum0) <= tol * fabs(sum0) &&
		     min1 >= min0 - ST_TOL && max1 <= max0 + ST_TOL;
		if (!ok && !p.rank)
			fprintf(stderr, "stencil: invariants broken: sum %.17g -> %.17g (tolerance %g relative), range [%g, %g] -> [%g, %g]\n",
				sum0, sum1, tol, min0, max0, min1, max1);
	}
	/*
	 * Per iteration both halos travel at once and the compute waits for the
	 * pair: one latency, two overheads each way, two halos through the port.
	 */
	if (p.nranks > 1)
		crit = (struct wl_critical){
			.path = o.iters, .sends = 2 * o.iters, .recvs = 2 * o.iters,
			.bytes = 2 * o.iters * o.radius * (int64_t)sizeof(double),
		};
	else
		crit = (struct wl_critical){ 0 };
	if (wl_result_reduce(&p, ok, t, &m, &crit, &r)) {
		fprintf(stderr, "stencil: rank %d: out of memory for the result\n", p.rank);
		goto err;
	}
	if (!p.rank) {
		struct wl_metric metrics[] = {
			{ "iter_us", r.time_s * 1e6 / (double)o.iters },
		};
		struct wl_param params[] = {
			{ "cells", x.total, NULL },
			{ "iters", o.iters, NULL },
			{ "radius", o.radius, NULL },
			{ "check", 0, st_check_names[o.check] },
		};

		wl_result_print(stdout, &p, &r, metrics, 1, params, 4);
	}
	wl_result_fini(&r);
	free(x.u);
	free(x.v);
	MPI_Finalize();
	return 0;
err:
	free(x.u);
	free(x.v);
	MPI_Abort(MPI_COMM_WORLD, 1);
	return 1;
}

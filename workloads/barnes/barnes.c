/* SPDX-License-Identifier: MIT */
/*
 * barnes: 3-D Barnes-Hut n-body steps with remote reads of tree cells.
 *
 *   mpirun -np N barnes [-n BODIES | -N TOTAL] [-s STEPS] [-t THETA]
 *                       [-c on|off] [-S SEED] [-d plummer|uniform]
 *                       [-v auto|direct|sanity] [-X] [-h]
 *
 * Bodies are split spatially over the ranks (bh_body.c).  Every step each
 * rank builds an octree of its own bodies; the force on a body is a walk
 * of every rank's tree, reading remote cells by blocking request/reply
 * messages (bh_remote.c), kept in a per-rank cache for the step with -c on.
 * Leapfrog (kick-drift-kick) with dt = BH_DT, softening BH_EPS.  An untimed
 * force computation on the initial state (it also makes the connections)
 * precedes the timed steps.
 *
 * Validation (bh_check.c): energy and momentum against their initial
 * values; with -v direct (auto: where rank 0 can afford it) also the last
 * step's forces against a direct O(n^2) sum at the same positions and the
 * final positions against a serial direct-force integration from the
 * initial state, each within a bound that grows as theta^2 (the error of a
 * monopole).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bh.h"
#include "bh_check.h"

#define BH_BODIES	8192
#define BH_STEPS	8
#define BH_THETA	0.7
#define BH_SEED		1
#define BH_BODIES_MAX	(1LL << 24)
#define BH_THETA_MAX	2.0

static const char *const bh_dist_names[] = { "plummer", "uniform" };
static const char *const bh_check_names[] = { "auto", "direct", "sanity" };

struct bh_opts {
	int64_t per_rank;
	int64_t total;		/* overrides per_rank when > 0 */
	int64_t steps;
	double theta;
	bool cache;
	int64_t seed;
	enum bh_dist dist;
	enum bh_check check;
	bool corrupt;
};

static const char bh_usage[] =
	"usage: mpirun -np N barnes [-n BODIES | -N TOTAL] [-s STEPS] [-t THETA]\n"
	"                           [-c on|off] [-S SEED] [-d plummer|uniform]\n"
	"                           [-v auto|direct|sanity] [-X] [-h]\n"
	"  -n BODIES  bodies per rank (default 8192)\n"
	"  -N TOTAL   bodies in all, split as evenly as possible (overrides -n;\n"
	"             fewer than N leaves ranks without bodies)\n"
	"  -s STEPS   timed time steps (default 8)\n"
	"  -t THETA   opening angle: a cell of side s acts as one mass when\n"
	"             s < THETA * distance; 0 is the direct sum (default 0.7)\n"
	"  -c on|off  cache remote cells for the rest of the step (default on)\n"
	"  -S SEED    initial conditions (default 1)\n"
	"  -d DIST    plummer (a Plummer sphere, default) or uniform (a cube at rest)\n"
	"  -v CHECK   direct: rank 0 compares forces and positions with a direct\n"
	"             O(n^2) computation; sanity: energy and momentum only;\n"
	"             auto: direct where cheap (default)\n"
	"  -X         testing: add a large mass to the first body each rank\n"
	"             receives in the last step, which the check must catch\n"
	"             (valid: false; needs remote reads, so N >= 2)\n"
	"  -h         this help\n"
	"Any N >= 1.  Prints one JSON result line (docs/results.md): metrics\n"
	"time_s, step_s, remote_reads, cache_hits, cache_misses, energy_err,\n"
	"momentum_err and, with the direct check, force_err and pos_err.\n";

static int bh_parse_theta(const struct wl_prog *p, const char *arg, double *out)
{
	char *end = NULL;
	double v = 0;

	if (arg && *arg && *arg != ' ') {
		v = strtod(arg, &end);
		if (!*end && isfinite(v) && v >= 0 && v <= BH_THETA_MAX) {
			*out = v;
			return 0;
		}
	}
	if (!p->rank) {
		if (arg)
			fprintf(stderr, "barnes: bad value '%s' for -t: expected a number from 0 to %g\n",
				arg, BH_THETA_MAX);
		else
			fprintf(stderr, "barnes: option -t needs a value: expected a number from 0 to %g\n",
				BH_THETA_MAX);
	}
	return -EINVAL;
}

static int bh_opt(const struct wl_prog *p, int c, const char *arg, void *ctx)
{
	struct bh_opts *o = ctx;
	int ret, v = 0;

	switch (c) {
	case 'n':
		ret = wl_opt_int(p, c, arg, 1, BH_BODIES_MAX, &o->per_rank);
		break;
	case 'N':
		ret = wl_opt_int(p, c, arg, 1, BH_BODIES_MAX, &o->total);
		break;
	case 's':
		ret = wl_opt_int(p, c, arg, 1, 1000000, &o->steps);
		break;
	case 't':
		ret = bh_parse_theta(p, arg, &o->theta);
		break;
	case 'c':
		ret = wl_opt_word(p, c, arg, (const char *const[]){ "off", "on" }, 2,
				    "on or off", &v);
		o->cache = v;
		break;
	case 'S':
		ret = wl_opt_int(p, c, arg, 0, INT64_MAX, &o->seed);
		break;
	case 'd':
		ret = wl_opt_word(p, c, arg, bh_dist_names, 2, "plummer or uniform", &v);
		o->dist = (enum bh_dist)v;
		break;
	case 'v':
		ret = wl_opt_word(p, c, arg, bh_check_names, 3,
				    "auto, direct or sanity", &v);
		o->check = (enum bh_check)v;
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
static int bh_parse(const struct wl_prog *p, int argc, char **argv, struct bh_opts *o)
{
	int ret;

	ret = wl_opt_getopt(p, argc, argv, ":n:N:s:t:c:S:d:v:Xh", NULL, bh_usage, bh_opt, o);
	if (ret)
		return ret;
	if (!o->total && wl_opt_per_rank(p, 'n', o->per_rank, BH_BODIES_MAX, "bodies"))
		return -EINVAL;
	if (o->check == BH_CHECK_DIRECT &&
	    ((o->total ? o->total : o->per_rank * p->nranks) > BH_DIRECT_BODIES_MAX ||
	     o->steps > BH_DIRECT_STEPS)) {
		if (!p->rank)
			fprintf(stderr, "barnes: bad value direct for -v: the direct check takes at most %lld bodies and %d steps\n",
				BH_DIRECT_BODIES_MAX, BH_DIRECT_STEPS);
		return -EINVAL;
	}
	return 0;
}

/* v += a dt / 2; adds the impulse scale sum m |a| dt / 2 to *kick. */
static void bh_kick(struct bh_body *b, int64_t n, double *kick)
{
	int64_t i;
	int d;

	for (i = 0; i < n; i++) {
		double a2 = 0;

		for (d = 0; d < 3; d++) {
			b[i].vel[d] += b[i].acc[d] * BH_DT / 2;
			a2 += b[i].acc[d] * b[i].acc[d];
		}
		*kick += b[i].mass * sqrt(a2) * BH_DT / 2;
	}
}

static void bh_drift(struct bh_body *b, int64_t n)
{
	int64_t i;
	int d;

	for (i = 0; i < n; i++)
		for (d = 0; d < 3; d++)
			b[i].pos[d] += b[i].vel[d] * BH_DT;
}

/* One force computation at the current positions, served to the others. */
static int bh_step_forces(struct bh_remote *x, struct bh_tree *t, const int64_t *counts,
			  struct bh_body *b, int64_t n, double theta, int32_t step,
			  struct wl_msgs *m, bool counting)
{
	int ret;

	ret = bh_tree_build(t, b, (int32_t)n);
	if (ret) {
		fprintf(stderr, "barnes: rank %d: cannot build the tree of %lld bodies: %s\n",
			x->p->rank, (long long)n,
			ret == -ERANGE ? "more than 8 bodies coincide" : strerror(-ret));
		return ret;
	}
	bh_remote_begin(x, t, step, m, counting);
	ret = bh_force(x, counts, b, (int32_t)n, theta);
	if (ret)
		return ret;
	return bh_remote_end(x);
}

int main(int argc, char **argv)
{
	struct wl_prog p = {
		.name = "barnes",
		.options = "-n BODIES, -N TOTAL, -s STEPS, -t THETA, -c on|off, -S SEED, -d DIST, -v CHECK, -X, -h",
	};
	struct bh_opts o = {
		.per_rank = BH_BODIES, .steps = BH_STEPS, .theta = BH_THETA,
		.cache = true, .seed = BH_SEED,
	};
	struct wl_msgs m = { 0 }, warm = { 0 };
	struct bh_remote x = { 0 };
	struct bh_tree tree = { 0 };
	struct bh_state s0, s1;
	struct bh_verdict vd;
	struct bh_body *b = NULL;
	int64_t *counts = NULL, total, lo, n, step, row[2], *rows = NULL;
	int64_t hits = 0, misses = 0, rmax = 0, rbytes = 0;
	double t0, t = 0, kick = 0;
	struct wl_critical crit = { 0 };
	struct wl_result r;
	char theta_str[32];
	int i, ret;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p.nranks);
	ret = bh_parse(&p, argc, argv, &o);
	if (ret) {
		MPI_Finalize();
		return ret > 0 ? 0 : WL_EXIT_USAGE;
	}
	total = o.total ? o.total : o.per_rank * p.nranks;
	if (o.check == BH_CHECK_AUTO)
		o.check = bh_check_direct_ok(total, o.steps) ? BH_CHECK_DIRECT : BH_CHECK_SANITY;
	wl_part(total, p.nranks, p.rank, &lo, &n);
	counts = malloc(sizeof(*counts) * (size_t)p.nranks);
	rows = malloc(sizeof(*rows) * 2 * (size_t)p.nranks);
	b = malloc(sizeof(*b) * (size_t)(n ? n : 1));
	if (!counts || !rows || !b || bh_remote_init(&x, &p, o.cache))
		goto nomem;
	for (i = 0; i < p.nranks; i++) {
		int64_t l;

		wl_part(total, p.nranks, i, &l, &counts[i]);
	}
	if (bh_body_setup(o.dist, (uint64_t)o.seed, total, lo, n, b))
		goto nomem;

	/* untimed: the forces of the initial state (and the connections) */
	if (bh_step_forces(&x, &tree, counts, b, n, o.theta, 0, &warm, false))
		goto err;
	bh_state_reduce(b, n, 0, &s0);

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (step = 1; step <= o.steps; step++) {
		bh_kick(b, n, &kick);
		bh_drift(b, n);
		x.corrupt = o.corrupt && step == o.steps;
		if (bh_step_forces(&x, &tree, counts, b, n, o.theta, (int32_t)step, &m, true))
			goto err;
		bh_kick(b, n, &kick);
	}
	t = MPI_Wtime() - t0;

	bh_state_reduce(b, n, kick, &s1);
	MPI_Allreduce(&x.hits, &hits, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(&x.misses, &misses, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	ret = bh_check(&p, o.check, o.dist, (uint64_t)o.seed, total, o.steps, o.theta,
		       b, n, &s0, &s1, &vd);
	if (ret) {
		if (!p.rank)
			fprintf(stderr, "barnes: out of memory for the direct check\n");
		goto err;
	}
	/*
	 * Every remote read is a blocking round trip: request, then reply, and
	 * the walk waits for it before it goes on, so a rank's reads add up
	 * in sequence.  The rank with the most reads is the critical path:
	 * 2 latencies, 2 sends and 2 receives (one each on either side) per
	 * read; the bytes are its requests and the replies it received.
	 */
	row[0] = x.misses;
	row[1] = x.reply_bytes + x.misses * (int64_t)sizeof(struct bh_req);
	MPI_Allgather(row, 2, MPI_INT64_T, rows, 2, MPI_INT64_T, MPI_COMM_WORLD);
	for (i = 0; i < p.nranks; i++) {
		if (i == 0 || rows[2 * i] > rmax) {
			rmax = rows[2 * i];
			rbytes = rows[2 * i + 1];
		}
	}
	crit = (struct wl_critical){
		.path = 2 * rmax, .sends = 2 * rmax, .recvs = 2 * rmax, .bytes = rbytes,
	};
	if (wl_result_reduce(&p, vd.ok, t, &m, &crit, &r)) {
		fprintf(stderr, "barnes: rank %d: out of memory for the result\n", p.rank);
		goto err;
	}
	if (!p.rank) {
		struct wl_metric metrics[] = {
			{ "remote_reads", (double)misses },
			{ "cache_hits", (double)hits },
			{ "cache_misses", (double)misses },
			{ "energy_err", vd.energy_err },
			{ "momentum_err", vd.momentum_err },
			{ "force_err", vd.force_err },
			{ "force_rms", vd.force_rms },
			{ "pos_err", vd.pos_err },
		};
		struct wl_param params[] = {
			{ "bodies", total, NULL },
			{ "steps", o.steps, NULL },
			{ "theta", 0, theta_str },
			{ "cache", 0, o.cache ? "on" : "off" },
			{ "seed", o.seed, NULL },
			{ "dist", 0, bh_dist_names[o.dist] },
			{ "check", 0, bh_check_names[o.check] },
		};

		snprintf(theta_str, sizeof(theta_str), "%g", o.theta);
		wl_result_print(stdout, &p, &r, metrics, o.check == BH_CHECK_DIRECT ? 8 : 5,
				params, 7);
	}
	wl_result_fini(&r);
	bh_tree_fini(&tree);
	bh_remote_fini(&x);
	free(b);
	free(counts);
	free(rows);
	MPI_Finalize();
	return 0;
nomem:
	fprintf(stderr, "barnes: rank %d: out of memory for %lld bodies\n", p.rank,
		(long long)n);
err:
	bh_tree_fini(&tree);
	bh_remote_fini(&x);
	free(b);
	free(counts);
	free(rows);
	MPI_Abort(MPI_COMM_WORLD, 1);
	return 1;
}

/* SPDX-License-Identifier: MIT */
/*
 * radb: parallel LSD radix sort of 32-bit keys, moved in bulk.
 *
 *   mpirun -np N radb [-n KEYS | -N TOTAL] [-s SEED] [-b BITS] [-X] [-h]
 *
 * The same sort as radix (workloads/radix/radix.c): the keys stay split over
 * the ranks in fixed blocks, every pass sorts them stably by one digit of
 * BITS bits, and MPI_Allgather of the per-rank digit histograms (a
 * collective: not counted among the messages) gives every key its global
 * position.  Instead of a message per key, a rank first orders its keys by
 * the pass's digit (a local counting sort); since the global positions of
 * its keys then increase along that order, the keys bound for one rank are
 * one contiguous slice, sent as ONE message: every pass, every rank
 * MPI_Isends one bucket to every other rank (an empty one too, so the count
 * is N - 1 per rank per pass) and MPI_Irecvs one from each.  The receiver
 * knows from the histograms how many keys each sender's bucket holds and
 * which of its positions they fill: for each digit in turn, the run of rank
 * 0's keys of that digit, then rank 1's, and so on; it places them so.
 *
 * Validation (wl_sortcheck.c): count, sum and xor of hashes of every key before
 * and after, reduced over ranks; each rank sorted and each non-empty rank's
 * first key >= the last of the non-empty rank before; every bucket of the
 * length the histograms promise.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "wl_sortcheck.h"
#include "wl.h"

#define RB_KEYS		(1 << 25)
#define RB_BITS		8
#define RB_BITS_MAX	16
#define RB_TAG		60	/* + pass */

struct rb_opts {
	struct sc_keys k;
	int64_t bits;
	bool corrupt;
};

struct rb_ctx {
	const struct wl_prog *p;
	int64_t total, lo, n;
	int bits, passes, radix;
	uint32_t *keys, *out;	/* n each: a pass moves keys into out */
	uint32_t *sorted;	/* n: my keys ordered by the pass's digit */
	uint32_t *rbuf;		/* n: the buckets received */
	int64_t *cnt;		/* radix: digits of my keys, then their offsets in sorted */
	int *hist;		/* nranks x radix: everyone's digit counts */
	int *scount, *sdispl;	/* nranks: my keys for each rank, offset in sorted */
	int *rcount, *rdispl;	/* nranks: keys from each rank, offset in rbuf */
	const uint32_t **cursor;	/* nranks: next key to place from each */
	MPI_Request *req;	/* 2 x nranks */
	MPI_Status *st;
	int64_t bad;		/* buckets of the wrong length */
	bool corrupt;		/* -X: still to damage the first key received */
	struct sc_phase *phases;
};

static const char rb_usage[] =
	"usage: mpirun -np N radb [-n KEYS | -N TOTAL] [-s SEED] [-b BITS] [-X] [-h]\n"
	"  -n KEYS    keys per rank (default 33554432)\n"
	"  -N TOTAL   keys in all, split as evenly as possible (overrides -n; a rank\n"
	"             may get none)\n"
	"  -s SEED    seed of the key generator (default 1)\n"
	"  -b BITS    bits per digit, 1..16; 32 / BITS passes, rounded up (default 8)\n"
	"  -X         testing: damage the first key each rank receives, which the\n"
	"             check must catch (valid: false; needs keys that cross ranks)\n"
	"  -h         this help\n"
	"Any N >= 1.  Every pass sends one message to every other rank.  Prints one\n"
	"JSON result line (docs/results.md): metrics time_s, ns_per_key.\n";

static int64_t rb_overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1)
{
	int64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? hi - lo : 0;
}

/* From the histograms: how many of my keys go to each rank, and come from each. */
static void rb_counts(struct rb_ctx *x)
{
	int me = x->p->rank, np = x->p->nranks, s, r, d;
	int64_t run = 0, c, rlo, rn;

	memset(x->scount, 0, sizeof(*x->scount) * (size_t)np);
	memset(x->rcount, 0, sizeof(*x->rcount) * (size_t)np);
	for (d = 0; d < x->radix; d++) {
		for (s = 0; s < np; s++) {
			c = x->hist[(size_t)s * (size_t)x->radix + (size_t)d];
			x->rcount[s] += (int)rb_overlap(run, run + c, x->lo, x->lo + x->n);
			if (s == me && c) {
				for (r = 0; r < np; r++) {
					wl_part(x->total, np, r, &rlo, &rn);
					x->scount[r] += (int)rb_overlap(run, run + c, rlo, rlo + rn);
				}
			}
			run += c;
		}
	}
	x->sdispl[0] = x->rdispl[0] = 0;
	for (r = 1; r < np; r++) {
		x->sdispl[r] = x->sdispl[r - 1] + x->scount[r - 1];
		x->rdispl[r] = x->rdispl[r - 1] + x->rcount[r - 1];
	}
}

/* Stable counting sort of my keys by the digit at shift into sorted. */
static void rb_local(struct rb_ctx *x, int shift)
{
	uint32_t mask = (uint32_t)x->radix - 1;
	int64_t i, sum = 0, c;
	int d;

	for (d = 0; d < x->radix; d++) {
		c = x->cnt[d];
		x->cnt[d] = sum;
		sum += c;
	}
	for (i = 0; i < x->n; i++)
		x->sorted[x->cnt[(x->keys[i] >> shift) & mask]++] = x->keys[i];
}

/* Fill my block: for each digit, the runs of rank 0, 1, ... in turn. */
static void rb_place(struct rb_ctx *x)
{
	int me = x->p->rank, np = x->p->nranks, s, d;
	int64_t run = 0, c, k, j = 0;

	for (s = 0; s < np; s++)
		x->cursor[s] = s == me ? x->sorted + x->sdispl[me] : x->rbuf + x->rdispl[s];
	for (d = 0; d < x->radix && j < x->n; d++) {
		for (s = 0; s < np; s++) {
			c = x->hist[(size_t)s * (size_t)x->radix + (size_t)d];
			k = rb_overlap(run, run + c, x->lo, x->lo + x->n);
			if (k) {
				memcpy(x->out + j, x->cursor[s], sizeof(uint32_t) * (size_t)k);
				x->cursor[s] += k;
				j += k;
			}
			run += c;
		}
	}
}

static void rb_pass(struct rb_ctx *x, int pass, struct wl_msgs *m)
{
	int shift = pass * x->bits, me = x->p->rank, np = x->p->nranks, k, peer, nreq = 0;
	uint32_t mask = (uint32_t)x->radix - 1, *t;
	struct sc_phase *ph = &x->phases[pass];
	int64_t i;
	int d, got;

	memset(x->cnt, 0, sizeof(*x->cnt) * (size_t)x->radix);
	for (i = 0; i < x->n; i++)
		x->cnt[(x->keys[i] >> shift) & mask]++;
	for (d = 0; d < x->radix; d++)
		x->hist[(size_t)me * (size_t)x->radix + (size_t)d] = (int)x->cnt[d];
	MPI_Allgather(MPI_IN_PLACE, x->radix, MPI_INT, x->hist, x->radix, MPI_INT,
		      MPI_COMM_WORLD);
	rb_counts(x);

	for (k = 1; k < np; k++) {
		peer = (me - k + np) % np;
		MPI_Irecv(x->rbuf + x->rdispl[peer], x->rcount[peer], MPI_UINT32_T, peer,
			  RB_TAG + pass, MPI_COMM_WORLD, &x->req[nreq++]);
	}
	rb_local(x, shift);
	for (k = 1; k < np; k++) {
		peer = (me + k) % np;
		MPI_Isend(x->sorted + x->sdispl[peer], x->scount[peer], MPI_UINT32_T, peer,
			  RB_TAG + pass, MPI_COMM_WORLD, &x->req[nreq++]);
		wl_msgs_sent(m, sizeof(uint32_t) * (size_t)x->scount[peer]);
		ph->sent++;
		ph->sent_bytes += (int64_t)sizeof(uint32_t) * x->scount[peer];
	}
	MPI_Waitall(nreq, x->req, x->st);
	for (k = 1; k < np; k++) {
		peer = (me - k + np) % np;
		MPI_Get_count(&x->st[k - 1], MPI_UINT32_T, &got);
		wl_msgs_recvd(m, sizeof(uint32_t) * (size_t)got);
		ph->recvd++;
		if (got != x->rcount[peer])
			x->bad++;
		if (x->corrupt && got > 0) {
			x->rbuf[x->rdispl[peer]] ^= 1u << 31;
			x->corrupt = false;
		}
	}
	rb_place(x);
	t = x->keys;
	x->keys = x->out;
	x->out = t;
}

static int rb_alloc(struct rb_ctx *x)
{
	size_t np = (size_t)x->p->nranks, radix = (size_t)x->radix, n = (size_t)x->n + 1;

	x->keys = malloc(sizeof(uint32_t) * n);
	x->out = malloc(sizeof(uint32_t) * n);
	x->sorted = malloc(sizeof(uint32_t) * n);
	x->rbuf = malloc(sizeof(uint32_t) * n);
	x->cnt = malloc(sizeof(int64_t) * radix);
	x->hist = malloc(sizeof(int) * radix * np);
	x->scount = malloc(sizeof(int) * np);
	x->sdispl = malloc(sizeof(int) * np);
	x->rcount = malloc(sizeof(int) * np);
	x->rdispl = malloc(sizeof(int) * np);
	x->cursor = malloc(sizeof(*x->cursor) * np);
	x->req = malloc(sizeof(MPI_Request) * 2 * np);
	x->st = malloc(sizeof(MPI_Status) * 2 * np);
	x->phases = calloc((size_t)x->passes, sizeof(*x->phases));
	if (!x->keys || !x->out || !x->sorted || !x->rbuf || !x->cnt || !x->hist ||
	    !x->scount || !x->sdispl || !x->rcount || !x->rdispl || !x->cursor ||
	    !x->req || !x->st || !x->phases)
		return -ENOMEM;
	return 0;
}

static void rb_free(struct rb_ctx *x)
{
	free(x->keys);
	free(x->out);
	free(x->sorted);
	free(x->rbuf);
	free(x->cnt);
	free(x->hist);
	free(x->scount);
	free(x->sdispl);
	free(x->rcount);
	free(x->rdispl);
	free(x->cursor);
	free(x->req);
	free(x->st);
	free(x->phases);
}

static int rb_opt(const struct wl_prog *p, int c, const char *arg, void *ctx)
{
	struct rb_opts *o = ctx;
	int ret;

	switch (c) {
	case 'n':
	case 'N':
	case 's':
		ret = sc_opt_keys(p, c, arg, &o->k);
		break;
	case 'b':
		ret = wl_opt_int(p, c, arg, 1, RB_BITS_MAX, &o->bits);
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
static int rb_parse(const struct wl_prog *p, int argc, char **argv, struct rb_opts *o)
{
	int ret;

	ret = wl_opt_getopt(p, argc, argv, ":n:N:s:b:Xh", NULL, rb_usage, rb_opt, o);
	if (ret)
		return ret;
	return sc_opts_finish(p, &o->k);
}

int main(int argc, char **argv)
{
	struct wl_prog p = {
		.name = "radb",
		.options = "-n KEYS, -N TOTAL, -s SEED, -b BITS, -X, -h",
	};
	struct rb_opts o = { .k = { .per_rank = RB_KEYS, .seed = 1 }, .bits = RB_BITS };
	struct rb_ctx x = { .p = &p };
	struct wl_msgs m = { 0 };
	struct wl_critical crit;
	struct sc_sum before;
	struct wl_result r;
	int pass, ret, ok, alloc_ok;
	double t0, t;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p.nranks);
	ret = rb_parse(&p, argc, argv, &o);
	if (ret) {
		MPI_Finalize();
		return ret > 0 ? 0 : WL_EXIT_USAGE;
	}
	x.total = o.k.total;
	wl_part(x.total, p.nranks, p.rank, &x.lo, &x.n);
	x.bits = (int)o.bits;
	x.passes = (32 + x.bits - 1) / x.bits;
	x.radix = 1 << x.bits;
	x.corrupt = o.corrupt;
	alloc_ok = !rb_alloc(&x);
	MPI_Allreduce(MPI_IN_PLACE, &alloc_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	if (!alloc_ok) {
		if (!p.rank)
			fprintf(stderr, "radb: out of memory for %" PRId64 " keys per rank\n", x.n);
		goto err;
	}
	sc_gen(x.keys, x.lo, x.n, o.k.seed);
	sc_sum_reduce(x.keys, x.n, &before);
	sc_warmup(&p);

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (pass = 0; pass < x.passes; pass++)
		rb_pass(&x, pass, &m);
	t = MPI_Wtime() - t0;

	if (x.bad)
		fprintf(stderr, "radb: rank %d: %" PRId64 " buckets of the wrong length\n",
			p.rank, x.bad);
	ok = sc_check(&p, x.keys, x.n, &before);
	if (ok < 0 || sc_crit_phases(&p, x.phases, x.passes, &crit)) {
		if (!p.rank)
			fprintf(stderr, "radb: out of memory for the check\n");
		goto err;
	}
	if (wl_result_reduce(&p, ok && !x.bad, t, &m, &crit, &r)) {
		fprintf(stderr, "radb: rank %d: out of memory for the result\n", p.rank);
		goto err;
	}
	if (!p.rank) {
		struct wl_metric metrics[] = {
			{ "ns_per_key", x.total ? r.time_s * 1e9 / (double)x.total : 0 },
		};
		struct wl_param params[] = {
			{ "keys", x.total, NULL },
			{ "seed", (int64_t)o.k.seed, NULL },
			{ "bits", x.bits, NULL },
			{ "passes", x.passes, NULL },
		};

		wl_result_print(stdout, &p, &r, metrics, 1, params, 4);
	}
	wl_result_fini(&r);
	rb_free(&x);
	MPI_Finalize();
	return 0;
err:
	rb_free(&x);
	MPI_Abort(MPI_COMM_WORLD, 1);
	return 1;
}

/* SPDX-License-Identifier: MIT */
/*
 * sample: parallel sample sort of 32-bit keys, one bulk message per bucket.
 *
 *   mpirun -np N sample [-n KEYS | -N TOTAL] [-s SEED] [-o SAMPLES] [-X] [-h]
 *
 * Each rank sorts its keys locally (LSD radix, wl_sortcheck.c) and picks SAMPLES
 * evenly spaced keys of them.  Rank 0 gathers the samples (MPI_Gather),
 * sorts them and picks N - 1 evenly spaced splitters, which it broadcasts
 * (MPI_Bcast).  Bucket j holds the keys k with splitter[j-1] < k <=
 * splitter[j]: a contiguous slice of the sorted keys, found by binary
 * search.  The bucket sizes are exchanged with MPI_Alltoall, then every rank
 * MPI_Isends each other rank its bucket as ONE message (an empty one too: N -
 * 1 per rank) and MPI_Irecvs one from each, and merges the N sorted runs it
 * holds (pairwise, log2 N rounds).  Ranks end with as many keys as their
 * bucket got, not their input share; the imbalance metric is the most any
 * rank got over the mean.  The gather, broadcast and all-to-all of the sizes
 * are collectives: in the timed region but not counted among the messages.
 *
 * Validation (wl_sortcheck.c): count, sum and xor of hashes of every key before
 * and after, reduced over ranks; each rank sorted and each non-empty rank's
 * first key >= the last of the non-empty rank before; every bucket of the
 * length announced.
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

#define SA_KEYS		(1 << 25)
#define SA_SAMPLES	64
#define SA_SAMPLES_MAX	4096
#define SA_NONE		UINT64_MAX	/* the sample of a rank without keys */
#define SA_TAG		70

struct sa_opts {
	struct sc_keys k;
	int64_t samples;
	bool corrupt;
};

struct sa_ctx {
	const struct wl_prog *p;
	int64_t total, lo, n;
	int samples;
	uint32_t *keys, *tmp;	/* n each: my input, sorted in place */
	uint64_t *mine;		/* samples */
	uint64_t *all;		/* rank 0: nranks x samples */
	uint32_t *split;	/* nranks - 1 splitters */
	int *scount, *sdispl;	/* nranks: my bucket for each rank, offset in keys */
	int *rcount, *rdispl;	/* nranks: bucket from each rank, offset in rbuf */
	int64_t m;		/* keys I end with */
	uint32_t *rbuf, *obuf;	/* m each: the runs received, the merged output */
	uint32_t *result;	/* rbuf or obuf: the sorted output */
	MPI_Request *req;	/* 2 x nranks */
	MPI_Status *st;
	int64_t bad;		/* buckets of the wrong length */
	bool corrupt;		/* -X: damage the first key received */
	struct sc_phase ph;
};

static const char sa_usage[] =
	"usage: mpirun -np N sample [-n KEYS | -N TOTAL] [-s SEED] [-o SAMPLES] [-X] [-h]\n"
	"  -n KEYS     keys per rank (default 33554432)\n"
	"  -N TOTAL    keys in all, split as evenly as possible (overrides -n; a rank\n"
	"              may get none)\n"
	"  -s SEED     seed of the key generator (default 1)\n"
	"  -o SAMPLES  samples per rank for choosing splitters, 1..4096 (default 64)\n"
	"  -X          testing: damage the first key each rank receives, which the\n"
	"              check must catch (valid: false; needs keys that cross ranks)\n"
	"  -h          this help\n"
	"Any N >= 1.  Sends one message to every other rank.  Prints one JSON\n"
	"result line (docs/results.md): metrics time_s, ns_per_key, imbalance.\n";

static int sa_cmp64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Index of the first key > v in sorted keys[0, n). */
static int64_t sa_upper(const uint32_t *keys, int64_t n, uint32_t v)
{
	int64_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (keys[mid] <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Samples, splitters (rank 0 chooses), and my buckets. */
static void sa_splitters(struct sa_ctx *x)
{
	int np = x->p->nranks, S = x->samples, i, j;
	int64_t valid = 0, k;

	for (i = 0; i < S; i++)
		x->mine[i] = x->n ? x->keys[(int64_t)(i + 1) * x->n / (S + 1)] : SA_NONE;
	MPI_Gather(x->mine, S, MPI_UINT64_T, x->all, S, MPI_UINT64_T, 0, MPI_COMM_WORLD);
	if (!x->p->rank) {
		qsort(x->all, (size_t)np * (size_t)S, sizeof(*x->all), sa_cmp64);
		while (valid < (int64_t)np * S && x->all[valid] != SA_NONE)
			valid++;
		for (j = 0; j < np - 1; j++)
			x->split[j] = valid ? (uint32_t)x->all[(j + 1) * valid / np] : UINT32_MAX;
	}
	if (np > 1)
		MPI_Bcast(x->split, np - 1, MPI_UINT32_T, 0, MPI_COMM_WORLD);
	x->sdispl[0] = 0;
	for (j = 0; j < np; j++) {
		k = j < np - 1 ? sa_upper(x->keys, x->n, x->split[j]) : x->n;
		if (k < x->sdispl[j])	/* splitters out of order: an empty bucket */
			k = x->sdispl[j];
		x->scount[j] = (int)(k - x->sdispl[j]);
		if (j < np - 1)
			x->sdispl[j + 1] = (int)k;
	}
}

/* Merge the nranks sorted runs of rbuf; x->result is where they end up. */
static void sa_merge(struct sa_ctx *x)
{
	int np = x->p->nranks, runs = np, r, w;
	int64_t *start, i, a, ae, b, be;
	uint32_t *src = x->rbuf, *dst = x->obuf, *t;

	start = malloc(sizeof(*start) * ((size_t)np + 1));
	if (!start) {
		fprintf(stderr, "sample: rank %d: out of memory for the merge\n", x->p->rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (r = 0; r < np; r++)
		start[r] = x->rdispl[r];
	start[np] = x->m;
	while (runs > 1) {
		for (r = 0, w = 0; r < runs; r += 2, w++) {
			a = start[r];
			ae = start[r + 1];
			i = a;
			if (r + 1 < runs) {
				b = ae;
				be = start[r + 2];
				while (a < ae && b < be)
					dst[i++] = src[b] < src[a] ? src[b++] : src[a++];
				memcpy(dst + i, src + b, sizeof(*src) * (size_t)(be - b));
				i += be - b;
			}
			memcpy(dst + i, src + a, sizeof(*src) * (size_t)(ae - a));
			start[w] = start[r];
		}
		start[w] = x->m;
		runs = w;
		t = src;
		src = dst;
		dst = t;
	}
	x->result = src;
	free(start);
}

static void sa_sort(struct sa_ctx *x, struct wl_msgs *m)
{
	int me = x->p->rank, np = x->p->nranks, k, peer, nreq = 0, got;

	sc_sort(x->keys, x->tmp, x->n);
	sa_splitters(x);
	MPI_Alltoall(x->scount, 1, MPI_INT, x->rcount, 1, MPI_INT, MPI_COMM_WORLD);
	x->rdispl[0] = 0;
	for (k = 1; k < np; k++)
		x->rdispl[k] = x->rdispl[k - 1] + x->rcount[k - 1];
	x->m = (int64_t)x->rdispl[np - 1] + x->rcount[np - 1];
	x->rbuf = malloc(sizeof(uint32_t) * ((size_t)x->m + 1));
	x->obuf = malloc(sizeof(uint32_t) * ((size_t)x->m + 1));
	if (!x->rbuf || !x->obuf) {
		fprintf(stderr, "sample: rank %d: out of memory for %" PRId64 " keys\n", me, x->m);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}

	for (k = 1; k < np; k++) {
		peer = (me - k + np) % np;
		MPI_Irecv(x->rbuf + x->rdispl[peer], x->rcount[peer], MPI_UINT32_T, peer,
			  SA_TAG, MPI_COMM_WORLD, &x->req[nreq++]);
	}
	for (k = 1; k < np; k++) {
		peer = (me + k) % np;
		MPI_Isend(x->keys + x->sdispl[peer], x->scount[peer], MPI_UINT32_T, peer,
			  SA_TAG, MPI_COMM_WORLD, &x->req[nreq++]);
		wl_msgs_sent(m, sizeof(uint32_t) * (size_t)x->scount[peer]);
		x->ph.sent++;
		x->ph.sent_bytes += (int64_t)sizeof(uint32_t) * x->scount[peer];
	}
	memcpy(x->rbuf + x->rdispl[me], x->keys + x->sdispl[me],
	       sizeof(uint32_t) * (size_t)x->scount[me]);
	MPI_Waitall(nreq, x->req, x->st);
	for (k = 1; k < np; k++) {
		peer = (me - k + np) % np;
		MPI_Get_count(&x->st[k - 1], MPI_UINT32_T, &got);
		wl_msgs_recvd(m, sizeof(uint32_t) * (size_t)got);
		x->ph.recvd++;
		if (got != x->rcount[peer])
			x->bad++;
		if (x->corrupt && got > 0) {
			x->rbuf[x->rdispl[peer]] ^= 1u << 31;
			x->corrupt = false;
		}
	}
	sa_merge(x);
}

static int sa_alloc(struct sa_ctx *x)
{
	size_t np = (size_t)x->p->nranks, n = (size_t)x->n + 1;

	x->keys = malloc(sizeof(uint32_t) * n);
	x->tmp = malloc(sizeof(uint32_t) * n);
	x->mine = malloc(sizeof(uint64_t) * (size_t)x->samples);
	if (!x->p->rank)
		x->all = malloc(sizeof(uint64_t) * (size_t)x->samples * np);
	x->split = malloc(sizeof(uint32_t) * np);
	x->scount = malloc(sizeof(int) * np);
	x->sdispl = malloc(sizeof(int) * np);
	x->rcount = malloc(sizeof(int) * np);
	x->rdispl = malloc(sizeof(int) * np);
	x->req = malloc(sizeof(MPI_Request) * 2 * np);
	x->st = malloc(sizeof(MPI_Status) * 2 * np);
	if (!x->keys || !x->tmp || !x->mine || (!x->p->rank && !x->all) || !x->split ||
	    !x->scount || !x->sdispl || !x->rcount || !x->rdispl || !x->req || !x->st)
		return -ENOMEM;
	return 0;
}

static void sa_free(struct sa_ctx *x)
{
	free(x->keys);
	free(x->tmp);
	free(x->mine);
	free(x->all);
	free(x->split);
	free(x->scount);
	free(x->sdispl);
	free(x->rcount);
	free(x->rdispl);
	free(x->rbuf);
	free(x->obuf);
	free(x->req);
	free(x->st);
}

static int sa_opt(const struct wl_prog *p, int c, const char *arg, void *ctx)
{
	struct sa_opts *o = ctx;
	int ret;

	switch (c) {
	case 'n':
	case 'N':
	case 's':
		ret = sc_opt_keys(p, c, arg, &o->k);
		break;
	case 'o':
		ret = wl_opt_int(p, c, arg, 1, SA_SAMPLES_MAX, &o->samples);
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
static int sa_parse(const struct wl_prog *p, int argc, char **argv, struct sa_opts *o)
{
	int ret;

	ret = wl_opt_getopt(p, argc, argv, ":n:N:s:o:Xh", NULL, sa_usage, sa_opt, o);
	if (ret)
		return ret;
	return sc_opts_finish(p, &o->k);
}

int main(int argc, char **argv)
{
	struct wl_prog p = {
		.name = "sample",
		.options = "-n KEYS, -N TOTAL, -s SEED, -o SAMPLES, -X, -h",
	};
	struct sa_opts o = { .k = { .per_rank = SA_KEYS, .seed = 1 }, .samples = SA_SAMPLES };
	struct sa_ctx x = { .p = &p };
	struct wl_msgs m = { 0 };
	struct wl_critical crit;
	struct sc_sum before;
	struct wl_result r;
	int ret, ok, alloc_ok;
	int64_t most;
	double t0, t;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p.nranks);
	ret = sa_parse(&p, argc, argv, &o);
	if (ret) {
		MPI_Finalize();
		return ret > 0 ? 0 : WL_EXIT_USAGE;
	}
	x.total = o.k.total;
	wl_part(x.total, p.nranks, p.rank, &x.lo, &x.n);
	x.samples = (int)o.samples;
	x.corrupt = o.corrupt;
	alloc_ok = !sa_alloc(&x);
	MPI_Allreduce(MPI_IN_PLACE, &alloc_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	if (!alloc_ok) {
		if (!p.rank)
			fprintf(stderr, "sample: out of memory for %" PRId64 " keys per rank\n", x.n);
		goto err;
	}
	sc_gen(x.keys, x.lo, x.n, o.k.seed);
	sc_sum_reduce(x.keys, x.n, &before);
	sc_warmup(&p);

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	sa_sort(&x, &m);
	t = MPI_Wtime() - t0;

	if (x.bad)
		fprintf(stderr, "sample: rank %d: %" PRId64 " buckets of the wrong length\n",
			p.rank, x.bad);
	MPI_Allreduce(&x.m, &most, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
	ok = sc_check(&p, x.result, x.m, &before);
	if (ok < 0 || sc_crit_phases(&p, &x.ph, 1, &crit)) {
		if (!p.rank)
			fprintf(stderr, "sample: out of memory for the check\n");
		goto err;
	}
	if (wl_result_reduce(&p, ok && !x.bad, t, &m, &crit, &r)) {
		fprintf(stderr, "sample: rank %d: out of memory for the result\n", p.rank);
		goto err;
	}
	if (!p.rank) {
		struct wl_metric metrics[] = {
			{ "ns_per_key", x.total ? r.time_s * 1e9 / (double)x.total : 0 },
			{ "imbalance", x.total ? (double)most * p.nranks / (double)x.total : 0 },
		};
		struct wl_param params[] = {
			{ "keys", x.total, NULL },
			{ "seed", (int64_t)o.k.seed, NULL },
			{ "samples", x.samples, NULL },
		};

		wl_result_print(stdout, &p, &r, metrics, 2, params, 3);
	}
	wl_result_fini(&r);
	sa_free(&x);
	MPI_Finalize();
	return 0;
err:
	sa_free(&x);
	MPI_Abort(MPI_COMM_WORLD, 1);
	return 1;
}

/* SPDX-License-Identifier: MIT */
/*
 * exchange: bandwidth-bound personalised all-to-all with MPI_Isend/Irecv.
 *
 *   mpirun -np N exchange [-i ITERS] [-s BYTES] [-X] [-h]
 *
 * In every iteration each rank posts a receive from every other rank, then
 * sends each of them its own block of -s bytes (peers in the order
 * rank+1, rank+2, ... so that not everyone hits rank 0 first), waits for
 * all of it, and checks every byte received.  Block (src, dst, iteration)
 * is a sequence of 64-bit words key + w * C whose key is a bijective hash of
 * (src, dst, iteration): two different blocks differ in every word, so a
 * block from the wrong peer, the wrong iteration or a stale buffer fails.
 * One untimed iteration first sets up connections.  One rank sends nothing
 * and is valid.  bandwidth_MBps is the payload of all ranks over time_s.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "wl.h"
#include "wl_hash.h"

#define EX_ITERS	250
#define EX_SIZE		(1 << 20)
#define EX_SIZE_MAX	(256 << 20)
#define EX_TAG		23

struct ex_opts {
	int64_t iters;
	int64_t size;
	bool corrupt;
};

/* One rank's buffers: block p of sbuf goes to rank p, of rbuf from rank p. */
struct ex_ctx {
	const struct wl_prog *p;
	const struct ex_opts *o;
	size_t words;		/* 64-bit words per block, rounded up */
	uint64_t *sbuf;
	uint64_t *rbuf;
	MPI_Request *req;
	MPI_Status *st;
};

static const char ex_usage[] =
	"usage: mpirun -np N exchange [-i ITERS] [-s BYTES] [-X] [-h]\n"
	"  -i ITERS   timed iterations; in each, every rank sends a block to every\n"
	"             other rank (default 250)\n"
	"  -s BYTES   block size per pair, suffix K or M for KiB or MiB (default 1M)\n"
	"  -X         testing: corrupt one received byte in the first timed\n"
	"             iteration, which the check must catch (valid: false; N >= 2)\n"
	"  -h         this help\n"
	"Any N >= 1.  Prints one JSON result line (docs/results.md): metrics\n"
	"time_s, bandwidth_MBps.\n";

static uint64_t ex_key(int src, int dst, int64_t it)
{
	return wl_mix64(((uint64_t)it << 32) ^ ((uint64_t)(uint32_t)src << 16) ^
		      (uint64_t)(uint32_t)dst);
}

static void ex_fill(uint64_t *buf, size_t words, uint64_t key)
{
	size_t w;

	for (w = 0; w < words; w++)
		buf[w] = key + w * WL_GOLDEN;
}

/* Bad bytes among the first size bytes of buf; a wrong length counts 1. */
static int64_t ex_check(const uint64_t *buf, size_t size, uint64_t key,
			const MPI_Status *st)
{
	size_t full = size / 8, w, j;
	int64_t bad = 0;
	uint64_t want;
	int count;

	MPI_Get_count(st, MPI_BYTE, &count);
	if ((size_t)count != size)
		bad++;
	for (w = 0; w < full; w++) {
		want = key + w * WL_GOLDEN;
		if (buf[w] == want)
			continue;
		for (j = 0; j < 8; j++)
			bad += ((const unsigned char *)&buf[w])[j] !=
			       ((const unsigned char *)&want)[j];
	}
	want = key + full * WL_GOLDEN;
	for (j = 0; j < size % 8; j++)
		bad += ((const unsigned char *)&buf[full])[j] !=
		       ((const unsigned char *)&want)[j];
	return bad;
}

/* One iteration; returns the bad bytes this rank received. */
static int64_t ex_iter(struct ex_ctx *x, int64_t it, bool timed, struct wl_msgs *m)
{
	int me = x->p->rank, n = x->p->nranks, k, peer, nreq = 0;
	size_t size = (size_t)x->o->size;
	int64_t bad = 0;

	for (k = 1; k < n; k++) {
		peer = (me - k + n) % n;
		MPI_Irecv(x->rbuf + (size_t)peer * x->words, (int)size, MPI_BYTE,
			  peer, EX_TAG, MPI_COMM_WORLD, &x->req[nreq++]);
	}
	for (k = 1; k < n; k++) {
		peer = (me + k) % n;
		ex_fill(x->sbuf + (size_t)peer * x->words, x->words, ex_key(me, peer, it));
		MPI_Isend(x->sbuf + (size_t)peer * x->words, (int)size, MPI_BYTE,
			  peer, EX_TAG, MPI_COMM_WORLD, &x->req[nreq++]);
		wl_msgs_sent(m, size);
	}
	MPI_Waitall(nreq, x->req, x->st);
	for (k = 1; k < n; k++) {
		uint64_t *blk;

		peer = (me - k + n) % n;
		blk = x->rbuf + (size_t)peer * x->words;
		wl_msgs_recvd(m, size);
		if (x->o->corrupt && timed && it == 1 && k == 1 && size)
			((unsigned char *)blk)[size / 2] ^= 0x5a;
		bad += ex_check(blk, size, ex_key(peer, me, it), &x->st[k - 1]);
	}
	return bad;
}

static int ex_opt(const struct wl_prog *p, int c, const char *arg, void *ctx)
{
	struct ex_opts *o = ctx;
	int ret;

	switch (c) {
	case 'i':
		ret = wl_opt_int(p, c, arg, 1, 1000000000, &o->iters);
		break;
	case 's':
		ret = wl_opt_size(p, c, arg, 0, EX_SIZE_MAX, &o->size);
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
static int ex_parse(const struct wl_prog *p, int argc, char **argv, struct ex_opts *o)
{
	return wl_opt_getopt(p, argc, argv, ":i:s:Xh", NULL, ex_usage, ex_opt, o);
}

int main(int argc, char **argv)
{
	struct wl_prog p = {
		.name = "exchange",
		.options = "-i ITERS, -s BYTES, -X, -h",
	};
	struct ex_opts o = { .iters = EX_ITERS, .size = EX_SIZE };
	struct ex_ctx x = { .p = &p, .o = &o };
	struct wl_msgs m = { 0 }, warm = { 0 };
	size_t blocks;
	struct wl_critical crit;
	struct wl_result r;
	int64_t bad = 0, it;
	double t0, t;
	int ret;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p.nranks);
	ret = ex_parse(&p, argc, argv, &o);
	if (ret) {
		MPI_Finalize();
		return ret > 0 ? 0 : WL_EXIT_USAGE;
	}
	x.words = ((size_t)o.size + 7) / 8;
	blocks = (size_t)p.nranks;
	x.sbuf = malloc((blocks * x.words + 1) * sizeof(uint64_t));
	x.rbuf = malloc((blocks * x.words + 1) * sizeof(uint64_t));
	x.req = malloc(2 * blocks * sizeof(*x.req));
	x.st = malloc(2 * blocks * sizeof(*x.st));
	if (!x.sbuf || !x.rbuf || !x.req || !x.st) {
		fprintf(stderr, "exchange: rank %d: out of memory for 2 x %zu blocks of %lld bytes\n",
			p.rank, blocks, (long long)o.size);
		goto err;
	}
	/* untimed: connection set-up; iteration 0's keys, timed ones are 1.. */
	bad += ex_iter(&x, 0, false, &warm);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (it = 1; it <= o.iters; it++)
		bad += ex_iter(&x, it, true, &m);
	t = MPI_Wtime() - t0;
	if (bad)
		fprintf(stderr, "exchange: rank %d: %lld bad bytes or sizes received\n",
			p.rank, (long long)bad);
	/*
	 * Per iteration a rank posts its N-1 sends and receives at once and waits
	 * for all: one latency, N-1 overheads each way, and its port serialises
	 * the N-1 blocks it sends.
	 */
	crit = (struct wl_critical){
		.path = p.nranks > 1 ? o.iters : 0,
		.sends = o.iters * (p.nranks - 1), .recvs = o.iters * (p.nranks - 1),
		.bytes = o.iters * (p.nranks - 1) * o.size,
	};
	if (wl_result_reduce(&p, !bad, t, &m, &crit, &r)) {
		fprintf(stderr, "exchange: rank %d: out of memory for the result\n", p.rank);
		goto err;
	}
	if (!p.rank) {
		struct wl_metric metrics[] = {
			{ "bandwidth_MBps",
			  r.time_s > 0 ? (double)r.msgs_bytes / r.time_s / 1e6 : 0.0 },
		};
		struct wl_param params[] = {
			{ "iters", o.iters, NULL },
			{ "size", o.size, NULL },
		};

		wl_result_print(stdout, &p, &r, metrics, 1, params, 2);
	}
	wl_result_fini(&r);
	free(x.sbuf);
	free(x.rbuf);
	free(x.req);
	free(x.st);
	MPI_Finalize();
	return 0;
err:
	free(x.sbuf);
	free(x.rbuf);
	free(x.req);
	free(x.st);
	MPI_Abort(MPI_COMM_WORLD, 1);
	return 1;
}

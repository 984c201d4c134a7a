/* SPDX-License-Identifier: MIT */
/*
 * radix: parallel LSD radix sort of 32-bit keys, one small message per key.
 *
 *   mpirun -np N radix [-n KEYS | -N TOTAL] [-s SEED] [-b BITS] [-g KEYS] [-X] [-h]
 *
 * Split-C's radix: the keys stay split over the ranks in fixed blocks (-N:
 * the first TOTAL mod N ranks hold one more); every pass sorts them stably by
 * one digit of BITS bits (32 / BITS passes, rounded up).  A pass counts the
 * digits of the rank's keys, MPI_Allgathers the histograms (a collective:
 * not counted among the messages), and from them every key gets its global
 * position: the keys of smaller digits, then those of its digit on lower
 * ranks, then those before it on its own rank.  The position names the
 * destination rank and the offset there.  Walking its keys in order, a rank
 * sends each key with its offset to the destination as a message of its own
 * (-g KEYS: up to KEYS (offset, key) pairs per message, gathered per
 * destination; a partial group goes when the pass's keys are done); the
 * receiver stores every key at the offset the message carries.  Keys whose
 * destination is their own rank are stored directly, without a message.
 *
 * Messages are MPI_Isend from a pool of send slots and MPI_Irecv
 * (MPI_ANY_SOURCE) into a window of receive slots; a rank that needs a free
 * send slot waits on both, so it keeps receiving while it sends, as an
 * Active Messages program polls.  Every rank knows from the histograms how
 * many keys each other rank sends it, so how many messages to receive.
 *
 * Validation (wl_sortcheck.c): count, sum and xor of hashes of every key before
 * and after, reduced over ranks; each rank sorted and each non-empty rank's
 * first key >= the last of the non-empty rank before; every offset received
 * inside the rank's block and every slot filled.
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

#define RX_KEYS		(1 << 17)
#define RX_BITS		8
#define RX_BITS_MAX	16
#define RX_GROUP_MAX	16384
#define RX_RECV_SLOTS	64	/* receives posted at once */
#define RX_SEND_SLOTS	64	/* sends in flight, beyond one filling per peer */
#define RX_POLL_EVERY	16	/* sends between two polls for arrivals */
#define RX_TAG		40	/* + pass */

struct rx_opts {
	struct sc_keys k;
	int64_t bits;
	int64_t group;
	bool corrupt;
};

/* One rank's keys and the exchange machinery of a pass. */
struct rx_ctx {
	const struct wl_prog *p;
	int64_t total, lo, n;
	int bits, passes, radix, group;
	uint32_t *keys, *out;	/* n each: a pass moves keys into out */
	int *cnt;		/* radix: digits of my keys */
	int *hist;		/* nranks x radix: everyone's cnt */
	int64_t *pos;		/* radix: global position of my next key per digit */
	int64_t *from;		/* nranks: keys each rank sends me this pass */

	int nrecv, nsend, nreq;
	uint32_t *rbuf, *sbuf;	/* slots of group (offset, key) pairs */
	MPI_Request *req;	/* nrecv receives, then nsend sends */
	MPI_Status *st;
	int *done;
	int *free_recv, nfree_recv;
	int *free_send, nfree_send;
	int *fill;		/* pairs in each send slot */
	int *filling;		/* per rank: its send slot being filled, or -1 */

	int tag;
	int64_t expect, posted, arrived;	/* messages to me this pass */
	int64_t placed;		/* keys stored in out this pass */
	int64_t nsent;		/* messages sent, for RX_POLL_EVERY */
	int64_t bad;		/* malformed messages, offsets out of the block */
	bool corrupt;		/* -X: still to damage the first key received */
	struct sc_phase *phases;	/* passes: what each pass sent and received */
	struct sc_phase *ph;	/* the current pass's */
	struct wl_msgs *m;
};

static const char rx_usage[] =
	"usage: mpirun -np N radix [-n KEYS | -N TOTAL] [-s SEED] [-b BITS] [-g KEYS] [-X] [-h]\n"
	"  -n KEYS    keys per rank (default 131072)\n"
	"  -N TOTAL   keys in all, split as evenly as possible (overrides -n; a rank\n"
	"             may get none)\n"
	"  -s SEED    seed of the key generator (default 1)\n"
	"  -b BITS    bits per digit, 1..16; 32 / BITS passes, rounded up (default 8)\n"
	"  -g KEYS    keys per message, 1..16384 (default 1: one message per key)\n"
	"  -X         testing: damage the first key each rank receives, which the\n"
	"             check must catch (valid: false; needs keys that cross ranks)\n"
	"  -h         this help\n"
	"Any N >= 1.  Prints one JSON result line (docs/results.md): metrics\n"
	"time_s, ns_per_key.\n";

static int64_t rx_overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1)
{
	int64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? hi - lo : 0;
}

/*
 * From the histograms: where my keys of each digit start (pos) and how many
 * keys, so how many messages, every other rank sends me.
 */
static void rx_layout(struct rx_ctx *x)
{
	int me = x->p->rank, np = x->p->nranks, s, d;
	int64_t run = 0, c;

	memset(x->from, 0, sizeof(*x->from) * (size_t)np);
	for (d = 0; d < x->radix; d++) {
		for (s = 0; s < np; s++) {
			c = x->hist[(size_t)s * (size_t)x->radix + (size_t)d];
			if (s == me)
				x->pos[d] = run;
			else
				x->from[s] += rx_overlap(run, run + c, x->lo, x->lo + x->n);
			run += c;
		}
	}
	x->expect = 0;
	for (s = 0; s < np; s++)
		x->expect += (x->from[s] + x->group - 1) / x->group;
}

static void rx_post(struct rx_ctx *x)
{
	int slot;

	while (x->posted < x->expect && x->nfree_recv) {
		slot = x->free_recv[--x->nfree_recv];
		MPI_Irecv(x->rbuf + 2 * (size_t)slot * (size_t)x->group, 2 * x->group,
			  MPI_UINT32_T, MPI_ANY_SOURCE, x->tag, MPI_COMM_WORLD, &x->req[slot]);
		x->posted++;
	}
}

/* A message arrived in receive slot slot: store its keys. */
static void rx_arrived(struct rx_ctx *x, int slot, MPI_Status *st)
{
	uint32_t *b = x->rbuf + 2 * (size_t)slot * (size_t)x->group;
	int words, j;

	MPI_Get_count(st, MPI_UINT32_T, &words);
	wl_msgs_recvd(x->m, sizeof(uint32_t) * (size_t)words);
	x->ph->recvd++;
	x->arrived++;
	x->free_recv[x->nfree_recv++] = slot;
	if (words <= 0 || words % 2 || words > 2 * x->group) {
		x->bad++;
		return;
	}
	if (x->corrupt) {
		b[1] ^= 1u << 31;
		x->corrupt = false;
	}
	for (j = 0; j < words; j += 2) {
		if (b[j] >= (uint64_t)x->n) {
			x->bad++;
			continue;
		}
		x->out[b[j]] = b[j + 1];
		x->placed++;
	}
}

/* Handle what completed; with block, wait for at least one request. */
static void rx_poll(struct rx_ctx *x, bool block)
{
	int nd, k, i;

	if (block)
		MPI_Waitsome(x->nreq, x->req, &nd, x->done, x->st);
	else
		MPI_Testsome(x->nreq, x->req, &nd, x->done, x->st);
	if (nd == MPI_UNDEFINED)
		return;
	for (k = 0; k < nd; k++) {
		i = x->done[k];
		if (i < x->nrecv)
			rx_arrived(x, i, &x->st[k]);
		else
			x->free_send[x->nfree_send++] = i - x->nrecv;
	}
	rx_post(x);
}

static void rx_send(struct rx_ctx *x, int dst)
{
	int slot = x->filling[dst];
	size_t words = 2 * (size_t)x->fill[slot];

	MPI_Isend(x->sbuf + 2 * (size_t)slot * (size_t)x->group, (int)words, MPI_UINT32_T,
		  dst, x->tag, MPI_COMM_WORLD, &x->req[x->nrecv + slot]);
	wl_msgs_sent(x->m, sizeof(uint32_t) * words);
	x->ph->sent++;
	x->ph->sent_bytes += (int64_t)(sizeof(uint32_t) * words);
	x->filling[dst] = -1;
	/*
	 * Take what has arrived while sending, as an Active Messages sender
	 * polls; not on every send, since over tcp an MPI_Testsome costs about
	 * as much as the send itself.
	 */
	if (++x->nsent % RX_POLL_EVERY == 0)
		rx_poll(x, false);
}

static void rx_put(struct rx_ctx *x, int dst, uint32_t off, uint32_t key)
{
	int slot = x->filling[dst];
	uint32_t *b;

	if (slot < 0) {
		while (!x->nfree_send)
			rx_poll(x, true);
		slot = x->free_send[--x->nfree_send];
		x->filling[dst] = slot;
		x->fill[slot] = 0;
	}
	b = x->sbuf + 2 * ((size_t)slot * (size_t)x->group + (size_t)x->fill[slot]);
	b[0] = off;
	b[1] = key;
	if (++x->fill[slot] == x->group)
		rx_send(x, dst);
}

static void rx_pass(struct rx_ctx *x, int pass)
{
	int shift = pass * x->bits, me = x->p->rank, np = x->p->nranks, dst, r;
	uint32_t mask = (uint32_t)x->radix - 1, key, *t;
	int64_t i, off;

	memset(x->cnt, 0, sizeof(*x->cnt) * (size_t)x->radix);
	for (i = 0; i < x->n; i++)
		x->cnt[(x->keys[i] >> shift) & mask]++;
	MPI_Allgather(x->cnt, x->radix, MPI_INT, x->hist, x->radix, MPI_INT, MPI_COMM_WORLD);
	rx_layout(x);
	x->tag = RX_TAG + pass;
	x->posted = x->arrived = x->placed = 0;
	rx_post(x);

	for (i = 0; i < x->n; i++) {
		key = x->keys[i];
		dst = wl_owner(x->total, np, x->pos[(key >> shift) & mask]++, &off);
		if (dst == me) {
			x->out[off] = key;
			x->placed++;
		} else {
			rx_put(x, dst, (uint32_t)off, key);
		}
	}
	for (r = 0; r < np; r++)
		if (x->filling[r] >= 0)
			rx_send(x, r);
	while (x->nfree_send < x->nsend || x->arrived < x->expect)
		rx_poll(x, true);
	if (x->placed != x->n)
		x->bad++;
	t = x->keys;
	x->keys = x->out;
	x->out = t;
}

static int rx_alloc(struct rx_ctx *x)
{
	size_t np = (size_t)x->p->nranks, radix = (size_t)x->radix, slot = 2 * (size_t)x->group;
	int i;

	x->nrecv = RX_RECV_SLOTS;
	x->nsend = (int)np + RX_SEND_SLOTS;
	x->nreq = x->nrecv + x->nsend;
	x->keys = malloc(sizeof(uint32_t) * ((size_t)x->n + 1));
	x->out = malloc(sizeof(uint32_t) * ((size_t)x->n + 1));
	x->cnt = malloc(sizeof(int) * radix);
	x->hist = malloc(sizeof(int) * radix * np);
	x->pos = malloc(sizeof(int64_t) * radix);
	x->from = malloc(sizeof(int64_t) * np);
	x->rbuf = malloc(sizeof(uint32_t) * slot * (size_t)x->nrecv);
	x->sbuf = malloc(sizeof(uint32_t) * slot * (size_t)x->nsend);
	x->req = malloc(sizeof(MPI_Request) * (size_t)x->nreq);
	x->st = malloc(sizeof(MPI_Status) * (size_t)x->nreq);
	x->done = malloc(sizeof(int) * (size_t)x->nreq);
	x->free_recv = malloc(sizeof(int) * (size_t)x->nrecv);
	x->free_send = malloc(sizeof(int) * (size_t)x->nsend);
	x->fill = malloc(sizeof(int) * (size_t)x->nsend);
	x->filling = malloc(sizeof(int) * np);
	x->phases = malloc(sizeof(*x->phases) * (size_t)x->passes);
	if (!x->keys || !x->out || !x->cnt || !x->hist || !x->pos || !x->from ||
	    !x->rbuf || !x->sbuf || !x->req || !x->st || !x->done || !x->free_recv ||
	    !x->free_send || !x->fill || !x->filling || !x->phases)
		return -ENOMEM;
	for (i = 0; i < x->nreq; i++)
		x->req[i] = MPI_REQUEST_NULL;
	for (i = 0; i < x->nrecv; i++)
		x->free_recv[i] = x->nrecv - 1 - i;
	for (i = 0; i < x->nsend; i++)
		x->free_send[i] = x->nsend - 1 - i;
	x->nfree_recv = x->nrecv;
	x->nfree_send = x->nsend;
	for (i = 0; i < (int)np; i++)
		x->filling[i] = -1;
	memset(x->phases, 0, sizeof(*x->phases) * (size_t)x->passes);
	return 0;
}

static void rx_free(struct rx_ctx *x)
{
	free(x->keys);
	free(x->out);
	free(x->cnt);
	free(x->hist);
	free(x->pos);
	free(x->from);
	free(x->rbuf);
	free(x->sbuf);
	free(x->req);
	free(x->st);
	free(x->done);
	free(x->free_recv);
	free(x->free_send);
	free(x->fill);
	free(x->filling);
	free(x->phases);
}

static int rx_opt(const struct wl_prog *p, int c, const char *arg, void *ctx)
{
	struct rx_opts *o = ctx;
	int ret;

	switch (c) {
	case 'n':
	case 'N':
	case 's':
		ret = sc_opt_keys(p, c, arg, &o->k);
		break;
	case 'b':
		ret = wl_opt_int(p, c, arg, 1, RX_BITS_MAX, &o->bits);
		break;
	case 'g':
		ret = wl_opt_int(p, c, arg, 1, RX_GROUP_MAX, &o->group);
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
static int rx_parse(const struct wl_prog *p, int argc, char **argv, struct rx_opts *o)
{
	int ret;

	ret = wl_opt_getopt(p, argc, argv, ":n:N:s:b:g:Xh", NULL, rx_usage, rx_opt, o);
	if (ret)
		return ret;
	return sc_opts_finish(p, &o->k);
}

int main(int argc, char **argv)
{
	struct wl_prog p = {
		.name = "radix",
		.options = "-n KEYS, -N TOTAL, -s SEED, -b BITS, -g KEYS, -X, -h",
	};
	struct rx_opts o = {
		.k = { .per_rank = RX_KEYS, .seed = 1 }, .bits = RX_BITS, .group = 1,
	};
	struct rx_ctx x = { .p = &p };
	struct wl_msgs m = { 0 };
	struct wl_critical crit;
	struct sc_sum before;
	struct wl_result r;
	int pass, ret, ok, alloc_ok;
	int64_t bad;
	double t0, t;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p.nranks);
	ret = rx_parse(&p, argc, argv, &o);
	if (ret) {
		MPI_Finalize();
		return ret > 0 ? 0 : WL_EXIT_USAGE;
	}
	x.total = o.k.total;
	wl_part(x.total, p.nranks, p.rank, &x.lo, &x.n);
	x.bits = (int)o.bits;
	x.passes = (32 + x.bits - 1) / x.bits;
	x.radix = 1 << x.bits;
	x.group = (int)o.group;
	x.corrupt = o.corrupt;
	x.m = &m;
	alloc_ok = !rx_alloc(&x);
	MPI_Allreduce(MPI_IN_PLACE, &alloc_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	if (!alloc_ok) {
		if (!p.rank)
			fprintf(stderr, "radix: out of memory for %" PRId64 " keys per rank\n", x.n);
		goto err;
	}
	sc_gen(x.keys, x.lo, x.n, o.k.seed);
	sc_sum_reduce(x.keys, x.n, &before);
	sc_warmup(&p);

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (pass = 0; pass < x.passes; pass++) {
		x.ph = &x.phases[pass];
		rx_pass(&x, pass);
	}
	t = MPI_Wtime() - t0;

	bad = x.bad;
	if (bad)
		fprintf(stderr, "radix: rank %d: %" PRId64 " malformed messages, offsets outside the block or unfilled passes\n",
			p.rank, bad);
	ok = sc_check(&p, x.keys, x.n, &before);
	if (ok < 0 || sc_crit_phases(&p, x.phases, x.passes, &crit)) {
		if (!p.rank)
			fprintf(stderr, "radix: out of memory for the check\n");
		goto err;
	}
	if (wl_result_reduce(&p, ok && !bad, t, &m, &crit, &r)) {
		fprintf(stderr, "radix: rank %d: out of memory for the result\n", p.rank);
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
			{ "group", x.group, NULL },
		};

		wl_result_print(stdout, &p, &r, metrics, 1, params, 5);
	}
	wl_result_fini(&r);
	rx_free(&x);
	MPI_Finalize();
	return 0;
err:
	rx_free(&x);
	MPI_Abort(MPI_COMM_WORLD, 1);
	return 1;
}

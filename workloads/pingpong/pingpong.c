/* SPDX-License-Identifier: MIT */
/*
 * pingpong: latency-bound round trips between ranks 0 and 1.
 *
 *   mpirun -np N pingpong [-n ROUNDS] [-t SECONDS] [-s BYTES] [-T FILE] [-X] [-h]
 *
 * Rank 0 sends a message of -s bytes to rank 1 with MPI_Send, rank 1 checks
 * every byte and sends it back, rank 0 checks every byte of the reply: -n
 * timed round trips after a few untimed ones (connection set-up).  Each
 * round's bytes are a function of the round, so a stale or misplaced
 * message fails the check.  Ranks 2.. only wait in the final collectives;
 * one rank is refused (exit 2).  Rank 0 prints the result line of
 * docs/results.md; half_rtt_us is the mean half round trip (time_s / 2n),
 * half_rtt_median_us the median of rank 0's rounds, which a few rounds
 * stalled by the scheduler (a 4 ms tick on a busy 2-core host) do not move,
 * half_rtt_min_us the fastest round: a bound a busy host cannot lower.
 * -T FILE writes every timed round trip in order, so a change of the
 * network during the run (a schedule's step) shows where it happened;
 * -t SECONDS runs rounds for that long (at most -n), so a run spans a
 * schedule's times however fast its rounds are.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "wl.h"

#define PP_ROUNDS	30000
#define PP_SIZE		8
#define PP_SIZE_MAX	(64 << 20)
#define PP_WARMUP	16
#define PP_TAG		17
#define PP_STOP		18	/* -t: the time is up */

struct pp_opts {
	int64_t rounds;
	int64_t seconds;	/* -t, 0 for none */
	int64_t size;
	const char *trace;
	bool corrupt;
};

static const char pp_usage[] =
	"usage: mpirun -np N pingpong [-n ROUNDS] [-t SECONDS] [-s BYTES] [-T FILE] [-X] [-h]\n"
	"  -n ROUNDS  timed round trips between ranks 0 and 1 (default 30000)\n"
	"  -t SECONDS stop the timed rounds after this long (at most -n of them)\n"
	"  -s BYTES   message size, suffix K or M for KiB or MiB (default 8)\n"
	"  -T FILE    rank 0 writes each timed round to FILE, one a line in the order\n"
	"             they ran: when it started (ns since the epoch) and its round\n"
	"             trip in microseconds\n"
	"  -X         testing: rank 1 corrupts one byte of the first timed reply,\n"
	"             which the check must catch (valid: false; needs -s >= 1)\n"
	"  -h         this help\n"
	"Needs N >= 2; ranks 2.. stay idle.  Prints one JSON result line\n"
	"(docs/results.md): metrics time_s, half_rtt_us, half_rtt_median_us,\n"
	"half_rtt_min_us.\n";

/* Byte i of round key: consecutive keys differ in every byte. */
static unsigned char pp_byte(uint64_t key, size_t i)
{
	return (unsigned char)(i * 131 + (i >> 8) + key * 7 + (key >> 8) * 3);
}

static void pp_fill(unsigned char *buf, size_t size, uint64_t key)
{
	size_t i;

	for (i = 0; i < size; i++)
		buf[i] = pp_byte(key, i);
}

static uint64_t pp_realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int pp_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int64_t pp_check(const unsigned char *buf, size_t size, uint64_t key,
			const MPI_Status *st)
{
	int64_t bad = 0;
	size_t i;
	int count;

	MPI_Get_count(st, MPI_BYTE, &count);
	if ((size_t)count != size)
		bad++;
	for (i = 0; i < size; i++)
		bad += buf[i] != pp_byte(key, i);
	return bad;
}

/*
 * Up to *n round trips with keys first.., rank 0 or 1; returns the bad
 * bytes seen.  Rank 0 stores each round trip's duration in rtt when it is
 * not NULL.  With until (MPI_Wtime) rank 0 stops once it has passed,
 * telling rank 1 by a message of tag PP_STOP; *n is then the rounds run.
 */
static int64_t pp_rounds(int rank, const struct pp_opts *o, unsigned char *sbuf,
			 unsigned char *rbuf, uint64_t first, int64_t *n,
			 double until, struct wl_msgs *m, double *rtt, uint64_t *when)
{
	size_t size = (size_t)o->size;
	MPI_Status st;
	int64_t bad = 0, it;

	for (it = 0; it < *n; it++) {
		uint64_t key = first + (uint64_t)it;

		if (rank == 0) {
			double t0 = MPI_Wtime();

			if (until && t0 >= until) {
				MPI_Send(sbuf, 0, MPI_BYTE, 1, PP_STOP, MPI_COMM_WORLD);
				break;
			}
			if (when)
				when[it] = pp_realtime_ns();
			pp_fill(sbuf, size, key);
			MPI_Send(sbuf, (int)size, MPI_BYTE, 1, PP_TAG, MPI_COMM_WORLD);
			wl_msgs_sent(m, size);
			MPI_Recv(rbuf, (int)size, MPI_BYTE, 1, PP_TAG, MPI_COMM_WORLD, &st);
			wl_msgs_recvd(m, size);
			bad += pp_check(rbuf, size, key, &st);
			if (rtt)
				rtt[it] = MPI_Wtime() - t0;
		} else {
			MPI_Recv(rbuf, (int)size, MPI_BYTE, 0, until ? MPI_ANY_TAG : PP_TAG,
				 MPI_COMM_WORLD, &st);
			if (st.MPI_TAG == PP_STOP)
				break;
			wl_msgs_recvd(m, size);
			bad += pp_check(rbuf, size, key, &st);
			if (o->corrupt && it == 0 && first == PP_WARMUP && size)
				rbuf[size / 2] ^= 0x5a;
			MPI_Send(rbuf, (int)size, MPI_BYTE, 0, PP_TAG, MPI_COMM_WORLD);
			wl_msgs_sent(m, size);
		}
	}
	*n = it;
	return bad;
}

static int pp_opt(const struct wl_prog *p, int c, const char *arg, void *ctx)
{
	struct pp_opts *o = ctx;
	int ret;

	switch (c) {
	case 'n':
		ret = wl_opt_int(p, c, arg, 1, 100000000, &o->rounds);
		break;
	case 's':
		ret = wl_opt_size(p, c, arg, 0, PP_SIZE_MAX, &o->size);
		break;
	case 't':
		ret = wl_opt_int(p, c, arg, 1, 86400, &o->seconds);
		break;
	case 'T':
		o->trace = arg;
		ret = 0;
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
static int pp_parse(const struct wl_prog *p, int argc, char **argv, struct pp_opts *o)
{
	return wl_opt_getopt(p, argc, argv, ":n:t:s:T:Xh", NULL, pp_usage, pp_opt, o);
}

int main(int argc, char **argv)
{
	struct wl_prog p = {
		.name = "pingpong",
		.options = "-n ROUNDS, -t SECONDS, -s BYTES, -T FILE, -X, -h",
	};
	struct pp_opts o = { .rounds = PP_ROUNDS, .size = PP_SIZE };
	unsigned char *sbuf = NULL, *rbuf = NULL;
	double *rtt = NULL, median = 0, least = 0;
	uint64_t *when = NULL;
	struct wl_msgs m = { 0 };
	struct wl_critical crit;
	struct wl_result r;
	double t0, t = 0;
	FILE *trace = NULL;
	int64_t bad = 0, i;
	int ret, opened;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p.nranks);
	ret = pp_parse(&p, argc, argv, &o);
	if (ret) {
		MPI_Finalize();
		return ret > 0 ? 0 : WL_EXIT_USAGE;
	}
	if (p.nranks < 2) {
		if (!p.rank)
			fprintf(stderr, "pingpong: needs at least 2 ranks, got %d (mpirun -np 2 ...)\n",
				p.nranks);
		MPI_Finalize();
		return WL_EXIT_USAGE;
	}
	/* Every rank learns whether rank 0 can write the trace, so none waits for it. */
	if (!p.rank && o.trace && !(trace = fopen(o.trace, "we")))
		fprintf(stderr, "pingpong: cannot write -T %s: %s (expected a file to create)\n",
			o.trace, strerror(errno));
	opened = !o.trace || trace;
	MPI_Bcast(&opened, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (!opened) {
		MPI_Finalize();
		return WL_EXIT_USAGE;
	}
	sbuf = malloc((size_t)o.size + 1);
	rbuf = malloc((size_t)o.size + 1);
	if (!p.rank)
		rtt = malloc(sizeof(*rtt) * (size_t)o.rounds);
	if (trace)
		when = malloc(sizeof(*when) * (size_t)o.rounds);
	if (!sbuf || !rbuf || (!p.rank && !rtt) || (trace && !when)) {
		fprintf(stderr, "pingpong: rank %d: out of memory for 2 x %lld bytes\n",
			p.rank, (long long)o.size);
		goto err;
	}
	if (p.rank < 2) {
		struct wl_msgs warm = { 0 };

		int64_t n = PP_WARMUP;

		bad += pp_rounds(p.rank, &o, sbuf, rbuf, 0, &n, 0, &warm, NULL, NULL);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	if (p.rank < 2)
		bad += pp_rounds(p.rank, &o, sbuf, rbuf, PP_WARMUP, &o.rounds,
				 o.seconds ? t0 + (double)o.seconds : 0, &m, rtt, when);
	t = MPI_Wtime() - t0;
	/* -t: how many rounds ran, for the ranks that did not take part */
	if (o.seconds)
		MPI_Bcast(&o.rounds, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
	if (trace) {
		for (i = 0; i < o.rounds; i++)
			fprintf(trace, "%" PRIu64 " %.3f\n", when[i], rtt[i] * 1e6);
		if (fclose(trace))
			fprintf(stderr, "pingpong: writing -T %s: %s\n", o.trace, strerror(errno));
	}
	if (!p.rank) {
		qsort(rtt, (size_t)o.rounds, sizeof(*rtt), pp_cmp_double);
		median = (rtt[(o.rounds - 1) / 2] + rtt[o.rounds / 2]) / 2;
		least = rtt[0];
	}
	if (bad)
		fprintf(stderr, "pingpong: rank %d: %lld bad bytes or sizes received\n",
			p.rank, (long long)bad);
	/* every leg of every round waits for the one before it */
	crit = (struct wl_critical){
		.path = 2 * o.rounds, .sends = 2 * o.rounds, .recvs = 2 * o.rounds,
		.bytes = 2 * o.rounds * o.size,
	};
	if (wl_result_reduce(&p, !bad, t, &m, &crit, &r)) {
		fprintf(stderr, "pingpong: rank %d: out of memory for the result\n", p.rank);
		goto err;
	}
	if (!p.rank) {
		struct wl_metric metrics[] = {
			{ "half_rtt_us", r.time_s * 1e6 / (2.0 * (double)o.rounds) },
			{ "half_rtt_median_us", median * 1e6 / 2 },
			{ "half_rtt_min_us", least * 1e6 / 2 },
		};
		struct wl_param params[] = {
			{ "rounds", o.rounds, NULL },
			{ "size", o.size, NULL },
		};

		wl_result_print(stdout, &p, &r, metrics, 3, params, 2);
	}
	wl_result_fini(&r);
	free(sbuf);
	free(rbuf);
	free(rtt);
	free(when);
	MPI_Finalize();
	return 0;
err:
	free(sbuf);
	free(rbuf);
	free(rtt);
	free(when);
	MPI_Abort(MPI_COMM_WORLD, 1);
	return 1;
}

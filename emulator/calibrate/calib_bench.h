/* SPDX-License-Identifier: MIT */
/*
 * The PRTT measurement protocol between client and server and the
 * reduction of its samples to LogGP parameters (method: calib_main.c).
 *
 * The client drives: for every point it sends a description over the
 * control socket, both sides meet in a barrier, then the samples run
 * over libfabric.  The server answers every burst with a 0-byte reply
 * and, for recorded points, returns its o_r samples afterwards.
 */
#ifndef CALIB_BENCH_H
#define CALIB_BENCH_H

#include "calib_fabric.h"
#include "calib_oob.h"
#include "calib_opts.h"

struct calib_stat {
	double p10;	/* the lower decile: o_r's fast mode (README, "o_r") */
	double median;
	double p99;
};

/* All times in microseconds, G in ns per byte. */
struct calib_results {
	struct calib_stat half_rtt;
	struct calib_stat o_s;
	struct calib_stat o_r;
	struct calib_stat g;
	struct calib_stat L;
	double G;		/* NaN when fewer than two sizes */
	double G_r2;
	double gap[CALIB_MAX_SIZES];	 /* median per-message gap per size */
	double half_rtt_size[CALIB_MAX_SIZES]; /* median PRTT(1,0,s)/2 */
};

/* Receive slots each side keeps posted: two bursts, so one is always ready. */
static inline unsigned calib_bench_nrecv(unsigned burst)
{
	return 2 * burst;
}

int calib_bench_client(struct calib_fabric *f, struct calib_oob *o,
		       const struct calib_opts *opts, struct calib_results *r);

int calib_bench_server(struct calib_fabric *f, struct calib_oob *o);

#endif /* CALIB_BENCH_H */

/* SPDX-License-Identifier: MIT */
/*
 * wl.h: what the workload programs share.
 *
 * - Option values (wl_opt.c): integers and byte sizes are parsed in full;
 *   a bad value, a missing value or an unknown option is one line on stderr
 *   from rank 0 that names the option and what it accepts, and the parser
 *   returns -EINVAL.  Every rank parses the same argv, so every rank reaches
 *   the same verdict; the caller finalizes MPI and exits WL_EXIT_USAGE.
 * - Message accounting and the result line (wl_result.c): each rank counts
 *   the point-to-point messages it sends and receives in the timed region
 *   (struct wl_msgs).  wl_result_reduce() is collective: it reduces the
 *   timed region (max over ranks), the verdict (and over ranks) and gathers
 *   the counts at rank 0, which prints the one JSON line of docs/results.md
 *   with wl_result_print().  The critical path is the program's to state
 *   (struct wl_critical): only it knows which waits overlap.
 *
 * Nothing here exits or aborts; functions return 0 or a negative errno.
 */
#ifndef WL_H
#define WL_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define WL_EXIT_USAGE	2

/* Which program this is and where it runs. */
struct wl_prog {
	const char *name;	/* workload name; prefix of every message */
	const char *options;	/* "-n ROUNDS, -s BYTES, ..." for errors */
	int rank;
	int nranks;
};

/* Point-to-point messages of one rank in the timed region. */
struct wl_msgs {
	int64_t sent;
	int64_t sent_bytes;
	int64_t recvd;
	int64_t recvd_bytes;
};

static inline void wl_msgs_sent(struct wl_msgs *m, size_t bytes)
{
	m->sent++;
	m->sent_bytes += (int64_t)bytes;
}

static inline void wl_msgs_recvd(struct wl_msgs *m, size_t bytes)
{
	m->recvd++;
	m->recvd_bytes += (int64_t)bytes;
}

/*
 * The critical path of the timed region, as the program's pattern defines it
 * (docs/results.md): path = messages whose latencies add up in sequence,
 * sends and recvs = the send and receive calls on it (each pays its
 * overhead), bytes = the bytes one injection port serialises on it.
 */
struct wl_critical {
	int64_t path;
	int64_t sends;
	int64_t recvs;
	int64_t bytes;
};

struct wl_metric {
	const char *name;
	double value;
};

/* A setting echoed in the result line: an integer, or str when non-NULL. */
struct wl_param {
	const char *name;
	int64_t value;
	const char *str;
};

/*
 * The reduced result.  Filled by wl_result_reduce(); per_rank and the msgs_*
 * totals are only meaningful on rank 0, which owns per_rank (free with
 * wl_result_fini()).
 */
struct wl_result {
	bool valid;
	double time_s;
	int ranks;
	int64_t msgs_total;
	int64_t msgs_bytes;
	struct wl_critical critical;
	int64_t *per_rank;
	char *hosts;		/* rank 0: each rank's processor name, WL_HOST_LEN apart */
};

#define WL_HOST_LEN	256	/* MPI_MAX_PROCESSOR_NAME or less, with its NUL */

/* wl_opt.c */
/* One option c with its value (NULL when missing): 0 or a negative errno. */
typedef int (*wl_opt_fn)(const struct wl_prog *p, int c, const char *arg, void *ctx);
/*
 * The getopt loop of every program (long options: longopts, or NULL).
 * optstring starts with ':' and has 'h';
 * -h prints usage (rank 0) and returns 1; an unknown option or a stray
 * argument is one line from rank 0 and -EINVAL; every other option goes to
 * opt(), whose first error is returned.  0: run.
 */
int wl_opt_getopt(const struct wl_prog *p, int argc, char **argv, const char *optstring,
		  const struct option *longopts, const char *usage, wl_opt_fn opt, void *ctx);
int wl_opt_int(const struct wl_prog *p, int opt, const char *arg,
	       int64_t min, int64_t max, int64_t *out);
int wl_opt_size(const struct wl_prog *p, int opt, const char *arg,
		int64_t min, int64_t max, int64_t *out);
/* arg one of names[0..n): *out its index; else one line naming expect. */
int wl_opt_word(const struct wl_prog *p, int opt, const char *arg, const char *const *names,
		int n, const char *expect, int *out);
/*
 * A per-rank count (-n) whose total over the ranks may not exceed max_total:
 * 0, or one line from rank 0 naming the limit in `what` units and -EINVAL.
 */
int wl_opt_per_rank(const struct wl_prog *p, int opt, int64_t per_rank, int64_t max_total,
		    const char *what);
int wl_opt_unknown(const struct wl_prog *p, int opt);
int wl_opt_extra(const struct wl_prog *p, const char *arg);

/* wl_result.c */
int wl_result_reduce(const struct wl_prog *p, bool valid, double time_s,
		     const struct wl_msgs *mine, const struct wl_critical *crit,
		     struct wl_result *r);
void wl_result_print(FILE *f, const struct wl_prog *p,
		     const struct wl_result *r,
		     const struct wl_metric *metrics, int nmetrics,
		     const struct wl_param *params, int nparams);
void wl_result_fini(struct wl_result *r);

#endif /* WL_H */

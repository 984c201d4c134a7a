/* SPDX-License-Identifier: MIT */
/*
 * loggp-hostnoise: how long this host stops a busy thread, and the
 * lateness that alone gives a release (noise_floor.h).  One thread per
 * CPU of the affinity mask, pinned, all spinning at once as ranks that
 * fill the cores do; one JSON line on stdout (README.md, "Host noise").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib_clock.h"
#include "noise_floor.h"

#define NOISE_NAME		"loggp-hostnoise"
/* A gap between two clock reads longer than this is a stall. */
#define NOISE_MIN_STALL_NS	1000ULL
/* Stalls kept per CPU; a host stopping a thread more often is counted, not kept. */
#define NOISE_MAX_STALLS	(1U << 20)

struct noise_cpu {
	int cpu;
	uint64_t span_ns;
	uint64_t *stall_ns;
	size_t n;
	uint64_t lost;		/* stalls past NOISE_MAX_STALLS */
	uint64_t max_ns;
	int err;
};

static pthread_barrier_t noise_start;
static uint64_t noise_duration_ns;

static void noise_usage(FILE *f)
{
	fprintf(f, "usage: %s [-t SECONDS] [-q QUANTILE]\n"
		"  -t  how long each CPU spins (default 0.5, at most 60)\n"
		"  -q  the quantile of the lateness floor (default 0.99, in [0.5, 1))\n",
		NOISE_NAME);
}

static void *noise_spin(void *arg)
{
	struct noise_cpu *c = arg;
	uint64_t start, prev, now, gap;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(c->cpu, &set);
	c->err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	pthread_barrier_wait(&noise_start);
	if (c->err)
		return NULL;
	start = prev = calib_now_ns();
	do {
		now = calib_now_ns();
		gap = now - prev;
		prev = now;
		if (gap <= NOISE_MIN_STALL_NS)
			continue;
		if (gap > c->max_ns)
			c->max_ns = gap;
		if (c->n < NOISE_MAX_STALLS)
			c->stall_ns[c->n++] = gap;
		else
			c->lost++;
	} while (now - start < noise_duration_ns);
	c->span_ns = now - start;
	return NULL;
}

static int noise_parse(int argc, char **argv, double *secs, double *q)
{
	char *end;
	int opt;

	while ((opt = getopt(argc, argv, "t:q:h")) != -1) {
		switch (opt) {
		case 't':
			*secs = strtod(optarg, &end);
			if (*end || !(*secs > 0 && *secs <= 60)) {
				fprintf(stderr, "%s: -t %s: want seconds in (0, 60], e.g. -t 0.5\n",
					NOISE_NAME, optarg);
				return -1;
			}
			break;
		case 'q':
			*q = strtod(optarg, &end);
			if (*end || !(*q >= 0.5 && *q < 1)) {
				fprintf(stderr, "%s: -q %s: want a quantile in [0.5, 1), e.g. -q 0.99\n",
					NOISE_NAME, optarg);
				return -1;
			}
			break;
		case 'h':
			noise_usage(stdout);
			exit(0);
		default:
			noise_usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s' (options: -t SECONDS, -q QUANTILE)\n",
			NOISE_NAME, argv[optind]);
		return -1;
	}
	return 0;
}

static void noise_print(const struct noise_cpu *cpus, int n, double secs, double q)
{
	uint64_t floor, worst = 0;

	printf("{\"tool\":\"%s\",\"version\":1,\"duration_s\":%g,\"quantile\":%g,"
	       "\"min_stall_ns\":%llu,\"cpus\":[", NOISE_NAME, secs, q,
	       (unsigned long long) NOISE_MIN_STALL_NS);
	for (int i = 0; i < n; i++) {
		const struct noise_cpu *c = &cpus[i];
		uint64_t stalled = noise_stalled_ns(c->stall_ns, c->n);
		double span = (double) c->span_ns;

		floor = noise_floor_ns(c->stall_ns, c->n, c->span_ns, q);
		if (floor > worst)
			worst = floor;
		printf("%s{\"cpu\":%d,\"span_ns\":%llu,\"stalls\":%llu,\"stalls_per_s\":%.1f,"
		       "\"stalled_share\":%.6f,\"max_stall_ns\":%llu,\"floor_ns\":%llu}",
		       i ? "," : "", c->cpu, (unsigned long long) c->span_ns,
		       (unsigned long long) (c->n + c->lost),
		       (double) (c->n + c->lost) * 1e9 / span, (double) stalled / span,
		       (unsigned long long) c->max_ns, (unsigned long long) floor);
	}
	printf("],\"floor_ns\":%llu}\n", (unsigned long long) worst);
}

int main(int argc, char **argv)
{
	double secs = 0.5, q = 0.99;
	struct noise_cpu *cpus;
	pthread_t *tids;
	cpu_set_t mask;
	int n = 0, ret = 1, started = 0;

	if (noise_parse(argc, argv, &secs, &q))
		return 2;
	noise_duration_ns = (uint64_t) (secs * 1e9);
	if (sched_getaffinity(0, sizeof(mask), &mask)) {
		fprintf(stderr, "%s: sched_getaffinity: %s\n", NOISE_NAME, strerror(errno));
		return 1;
	}
	cpus = calloc((size_t) CPU_COUNT(&mask), sizeof(*cpus));
	tids = calloc((size_t) CPU_COUNT(&mask), sizeof(*tids));
	if (!cpus || !tids)
		goto oom;
	for (int cpu = 0; cpu < CPU_SETSIZE && n < CPU_COUNT(&mask); cpu++) {
		if (!CPU_ISSET(cpu, &mask))
			continue;
		cpus[n].cpu = cpu;
		cpus[n].stall_ns = malloc(NOISE_MAX_STALLS * sizeof(uint64_t));
		if (!cpus[n++].stall_ns)
			goto oom;
	}
	pthread_barrier_init(&noise_start, NULL, (unsigned) n);
	for (; started < n; started++) {
		if (pthread_create(&tids[started], NULL, noise_spin, &cpus[started]))
			break;
	}
	if (started < n) {
		/* The barrier waits for n: spin nothing, report the failure. */
		fprintf(stderr, "%s: cannot start a thread for CPU %d\n", NOISE_NAME,
			cpus[started].cpu);
		exit(1);
	}
	for (int i = 0; i < n; i++)
		pthread_join(tids[i], NULL);
	pthread_barrier_destroy(&noise_start);
	for (int i = 0; i < n; i++) {
		if (cpus[i].err) {
			fprintf(stderr, "%s: cannot pin a thread to CPU %d: %s\n", NOISE_NAME,
				cpus[i].cpu, strerror(cpus[i].err));
			goto out;
		}
	}
	noise_print(cpus, n, secs, q);
	ret = 0;
	goto out;
oom:
	fprintf(stderr, "%s: out of memory\n", NOISE_NAME);
out:
	for (int i = 0; cpus && i < n; i++)
		free(cpus[i].stall_ns);
	free(cpus);
	free(tids);
	return ret;
}

/* SPDX-License-Identifier: MIT */
/*
 * loggp-calibrate: shared declarations (clock, errors, run options).
 * See calib_main.c for the measurement method.
 */
#ifndef CALIB_H
#define CALIB_H

#include <stddef.h>
#include <stdint.h>

#ifdef CALIB_HAVE_LGP_CORE
#include <lgp/clock.h>

static inline uint64_t calib_now_ns(void)
{
	return lgp_now_ns();
}
#else
#include <time.h>

/* Stand-in for lgp_now_ns() when emulator/core is not built. */
static inline uint64_t calib_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
#endif

#define CALIB_NAME "loggp-calibrate"
#define CALIB_MAX_SIZES 32
#define CALIB_MAX_BURST 256

/* Prints "loggp-calibrate: <msg>" as one line on stderr. */
void calib_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

struct calib_opts {
	const char *provider;		/* NULL: libfabric's first choice */
	const char *ep_type;		/* "rdm" */
	const char *server_host;	/* NULL: this process is the server */
	const char *bind_addr;		/* OOB listen address of the server */
	const char *json_path;
	uint16_t port;			/* OOB control port */
	unsigned iterations;		/* samples per measured point */
	unsigned warmup;		/* unrecorded samples before each point */
	unsigned burst;			/* n of PRTT(n,0,s) for g and G */
	unsigned timeout_s;		/* every wait gives up after this */
	unsigned spin_polls;		/* empty CQ polls before sched_yield */
	size_t sizes[CALIB_MAX_SIZES];	/* ascending */
	unsigned nsizes;
	int quiet;
};

#endif /* CALIB_H */

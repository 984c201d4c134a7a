/* SPDX-License-Identifier: MIT */
/*
 * The options of one loggp-calibrate run, parsed by calib_main.c and read
 * by the fabric, the benchmark and the report.  See calib_main.c for the
 * measurement method.
 */
#ifndef CALIB_OPTS_H
#define CALIB_OPTS_H

#include <stddef.h>
#include <stdint.h>

#define CALIB_MAX_SIZES 32
#define CALIB_MAX_BURST 256
/* Longest control spin, 1 s: beyond it a run would take hours. */
#define CALIB_MAX_SPIN_NS 1000000000UL

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
	/*
	 * The control: the application itself spins this long before each
	 * ping-pong send (counted in o_s) and after each ping-pong receive
	 * (counted in o_r), on both sides, without the shim.
	 */
	uint64_t spin_send_ns;
	uint64_t spin_recv_ns;
	size_t sizes[CALIB_MAX_SIZES];	/* ascending */
	unsigned nsizes;
	int quiet;
};

#endif /* CALIB_OPTS_H */

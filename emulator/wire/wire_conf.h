/* SPDX-License-Identifier: MIT */
/*
 * Application options of loggp-wire (everything after the EAL's "--").
 * Parsing is DPDK-free so it is unit-tested and so a bad option is
 * reported before the EAL starts.  Strings point into argv.
 */
#ifndef WIRE_CONF_H
#define WIRE_CONF_H

#include <stddef.h>
#include <stdint.h>

#include "wire_dist.h"
#include "wire_shape.h"
#include "wire_state.h"

#define WIRE_DEF_IDLE_SLEEP_NS	20000ULL
#define WIRE_DEF_SEED		1ULL

struct wire_conf {
	enum wire_mode mode;
	const char *control_path;	/* NULL: no control socket */
	char metrics_host[256];		/* empty: no metrics endpoint */
	uint16_t metrics_port;
	const char *stats_json;		/* NULL: totals on stdout only */
	struct wire_shape shape;	/* initial knobs of every port */
	uint64_t seed;
	/* the delay distribution around each port's latency (lgp/dist.h):
	 * --latency-dist, --latency-corr and --seed as the shim's
	 * LOGGP_LATENCY_DIST, LOGGP_LATENCY_CORR and LOGGP_SEED */
	const char *latency_dist;	/* NULL: constant */
	const char *latency_corr;	/* NULL: 0 */
	struct wire_dist *dist;		/* from those; owned until taken */
	uint64_t idle_sleep_ns;		/* 0: busy poll */
	uint64_t queue_capacity;	/* delay line size; 0: see below */
	int jitter_reorder;
	int help;
};

/*
 * Parse argv[0..argc) (argv[0] is an option, not the program name).
 * Returns 0 or -EINVAL with one line in err naming the option, the bad
 * text and what is accepted (-ERANGE, -errno or -ENOMEM from the
 * distribution's settings, worded as the shim's with the options' names).
 * queue_capacity defaults to max(queue_pkts, WIRE_DEF_QUEUE_PKTS).
 * A parse that returned 0 is released with wire_conf_fini() (which frees
 * dist unless the caller took it and set it to NULL).
 */
int wire_conf_parse(struct wire_conf *c, int argc, char **argv, char *err,
		    size_t errlen);
void wire_conf_fini(struct wire_conf *c);

/* The option summary printed by --help. */
const char *wire_conf_usage(void);

#endif /* WIRE_CONF_H */

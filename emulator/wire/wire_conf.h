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
	uint64_t idle_sleep_ns;		/* 0: busy poll */
	uint64_t queue_capacity;	/* delay line size; 0: see below */
	int jitter_reorder;
	int help;
};

/*
 * Parse argv[0..argc) (argv[0] is an option, not the program name).
 * Returns 0 or -EINVAL with one line in err naming the option, the bad
 * text and what is accepted.  queue_capacity defaults to
 * max(queue_pkts, WIRE_DEF_QUEUE_PKTS).
 */
int wire_conf_parse(struct wire_conf *c, int argc, char **argv, char *err,
		    size_t errlen);

/* The option summary printed by --help. */
const char *wire_conf_usage(void);

#endif /* WIRE_CONF_H */

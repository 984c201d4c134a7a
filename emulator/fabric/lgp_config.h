/* SPDX-License-Identifier: MIT */
/*
 * Process-wide configuration, read once from the environment and the
 * provider's libfabric parameters (lgp_prov.c).
 */
#ifndef LGP_CONFIG_H
#define LGP_CONFIG_H

#include <stdbool.h>

#include <lgp/dist.h>
#include <lgp/knob.h>
#include <lgp/sched.h>

#include "lgp_topo.h"

struct lgp_config {
	struct lgp_params params;
	struct lgp_dist dist;	/* LOGGP_LATENCY_DIST, _CORR, LOGGP_SEED */
	uint64_t dist_stream;	/* the MPI rank << 32: ranks draw apart */
	struct lgp_topo topo;	/* LOGGP_TOPOLOGY: latency per destination */
	struct lgp_sched sched;	/* LOGGP_SCHEDULE: knobs over time, or no steps */
	int64_t sched_origin;	/* its time 0 on lgp_now_ns()'s clock */
	uint64_t sched_origin_unix_ns;	/* and on CLOCK_REALTIME */
	struct lgp_params peak;	/* each knob's largest, over the schedule too */
	bool active;		/* any knob non-zero (in any step), a
				   distribution, or a destination the
				   topology adds to */
	int error;		/* knob parse error: refuse to open domains */
	char errmsg[LGP_KNOB_ERRLEN];
	char stats_file[4096];	/* LOGGP_STATS_FILE, or "" */
	bool progress_idle;	/* progress thread runs as SCHED_IDLE */
};

/* Loads the configuration on first use; thread-safe, never NULL. */
const struct lgp_config *lgp_config_get(void);

/* LOGGP_STATS_FILE opened to append, never blocking: the fd, or -EINVAL for
 * anything but a regular file, or -errno. */
int lgp_stats_file_open(const char *path);

#endif /* LGP_CONFIG_H */

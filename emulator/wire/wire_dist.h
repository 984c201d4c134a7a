/* SPDX-License-Identifier: MIT */
/*
 * The wire's delay distribution (lgp/dist.h): one for the whole process,
 * its mean each port's latency of the moment (wire_egress.h), set at start
 * by --latency-dist, --latency-corr and --seed and replaced while running
 * by the control socket's "dist" request (the runner sets the one its
 * experiment file names before a run, and puts back the previous after).
 *
 * A distribution is an immutable box handed to the forwarding lcore as
 * knobs are (wire_state.h): an atomic pointer swapped by the control
 * thread, the old box freed after the lcore's grace period.  Each port
 * notices a new box by its generation and starts its generator stream and
 * its delay histogram again.
 */
#ifndef WIRE_DIST_H
#define WIRE_DIST_H

#include <stddef.h>
#include <stdint.h>

#include <lgp/dist.h>

#define WIRE_DIST_TEXT	256	/* the longest latency_dist kept as given */

struct wire_dist {
	struct lgp_dist dist;
	char spec[WIRE_DIST_TEXT];	/* as given; "" for constant */
	char corr[32];			/* as given; "" for none */
	uint64_t seed;
	uint64_t gen;			/* 1, 2, ... as published: a port
					 * tells a new box by it, never by
					 * an address malloc may reuse */
	struct wire_dist *next_retired;
};

/* How the settings are named in errors: options or control keys. */
enum wire_dist_names { WIRE_DIST_OPTIONS, WIRE_DIST_KEYS };

/*
 * A new box from the settings' texts (NULL: unset), configured by
 * lgp_dist_config(); NULL with one line in err (the shim's words, the
 * settings named as names says, e.g. "bad value 'gauss:1us' for
 * --latency-dist: expected constant, ...") and *rc set to -EINVAL,
 * -ERANGE, -errno of the file or -ENOMEM.
 */
struct wire_dist *wire_dist_new(const char *spec, const char *corr,
				const char *seed, enum wire_dist_names names,
				int *rc, char *err, size_t errlen);
void wire_dist_free(struct wire_dist *d);

#endif /* WIRE_DIST_H */

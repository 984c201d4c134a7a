/* SPDX-License-Identifier: MIT */
/*
 * Delay distributions: ΔL drawn per message instead of one constant.
 *
 * Settings (lgp/knobs.def, LGP_SETTING; the shim refuses a bad value):
 *   LOGGP_LATENCY_DIST  constant | uniform:TIME | normal:TIME | pareto:TIME
 *                       | paretonormal:TIME | empirical:FILE
 *   LOGGP_LATENCY_CORR  a number from 0 to 1 (default 0)
 *   LOGGP_SEED          a whole number (default 1)
 * TIME as every time knob takes it (<number>{ns|us|ms|s}).
 *
 * A delay is ΔL = LOGGP_LATENCY + spread * Q(u) for the shapes with a
 * spread (TIME), where u is uniform on [0, 1) and Q the shape's quantile
 * function, the same shapes iproute2's netem ships as tables (its
 * netem/normal.c, pareto.c, paretonormal.c generate them; values in
 * units of the spread, clipped to [-4, 32767/8192] as netem's 16-bit
 * tables with NETEM_DIST_SCALE 8192 are):
 *   uniform       Q(u) = 2u - 1                     (netem's plain jitter)
 *   normal        Q(u) = Phi^-1(u)                  (mean 0, sd 1)
 *   pareto        Q(u) = ((1 - u)^(-1/3) - 1.5) * 4/3
 *                 (Pareto of shape 3 and scale 1 around its mean 1.5;
 *                 never below -2/3, sd 1.15)
 *   paretonormal  Q(u) = (Phi^-1(u) + 3 * pareto Q(u)) / 4
 *                 (netem's .25 normal + .75 pareto, both at the same u)
 * The parametric shapes are tabulated once, at 4096 steps of u, and
 * interpolated linearly.  empirical:FILE draws one of the file's delays
 * (one per line in the form of a time knob, '#' comments and blank lines
 * skipped, at most LGP_DIST_EMPIRICAL_MAX), each equally likely, and adds
 * LOGGP_LATENCY to it.  A delay below zero is drawn as 0.
 *
 * Correlation is netem's: u_n = (1 - rho) * r + rho * u_{n-1} with r a
 * fresh uniform number, so consecutive u have correlation rho; like
 * netem's, it also narrows the spread of u (its variance is (1 - rho) /
 * (1 + rho) of an uncorrelated one's).
 *
 * Order: a caller that keeps a path's messages in order (the default of
 * both shims) releases each at max(its own time, the previous release on
 * that path): lgp_dist_in_order().
 *
 * Threads: a struct lgp_dist is read-only after lgp_dist_config() and
 * may be shared; each drawing context (the shim's domain, under its lock;
 * a wire port) keeps its own struct lgp_dist_rng, a splitmix64 generator
 * seeded from LOGGP_SEED and its stream number, so a run draws the same
 * delays whatever the threads' timing.
 *
 * Errors are one line (the shim prefixes "loggp: "):
 *   bad value 'gauss:20us' for LOGGP_LATENCY_DIST: expected constant,
 *   uniform:TIME, normal:TIME, pareto:TIME, paretonormal:TIME or
 *   empirical:FILE, TIME as <number>{ns|us|ms|s}, e.g. 10us or 2.5ms
 *   bad value 'x' at /path/delays:3 for LOGGP_LATENCY_DIST: expected one
 *   delay per line as <number>{ns|us|ms|s}, e.g. 10us or 2.5ms
 */
#ifndef LGP_DIST_H
#define LGP_DIST_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Steps of u in the table of a parametric shape. */
#define LGP_DIST_TABLE		4096
/* Most delays an empirical file may hold. */
#define LGP_DIST_EMPIRICAL_MAX	(1U << 20)

enum lgp_dist_shape {
	LGP_DIST_CONSTANT,	/* ΔL = LOGGP_LATENCY, nothing drawn */
	LGP_DIST_UNIFORM,
	LGP_DIST_NORMAL,
	LGP_DIST_PARETO,
	LGP_DIST_PARETONORMAL,
	LGP_DIST_EMPIRICAL,
};

struct lgp_dist {
	enum lgp_dist_shape shape;
	uint64_t mean_ns;	/* LOGGP_LATENCY */
	uint64_t spread_ns;	/* the TIME of the shape; 0 for empirical */
	double rho;		/* LOGGP_LATENCY_CORR */
	uint64_t seed;		/* LOGGP_SEED */
	size_t n;		/* table points: LGP_DIST_TABLE + 1, or
				   the empirical delays */
	double *q;		/* Q at u = i / LGP_DIST_TABLE, or the
				   empirical delays in ns, sorted */
};

struct lgp_dist_rng {
	uint64_t state;
	double last;		/* the previous u, for correlation */
};

/*
 * Reads the three settings' texts (NULL: unset) into *d, with mean_ns the
 * parsed LOGGP_LATENCY.  Returns 0, or -EINVAL (-ERANGE for a value that
 * does not fit, -errno for a file that cannot be read, -ENOMEM) with one
 * line in err; *d is then constant and needs no lgp_dist_fini().
 * LOGGP_LATENCY_CORR without a distribution is an error (it would be
 * ignored).
 */
int lgp_dist_config(struct lgp_dist *d, const char *dist, const char *corr,
		    const char *seed, uint64_t mean_ns, char *err,
		    size_t errlen);

/* lgp_dist_config() from the LOGGP_* environment. */
int lgp_dist_from_env(struct lgp_dist *d, uint64_t mean_ns, char *err,
		      size_t errlen);

void lgp_dist_fini(struct lgp_dist *d);

/* Nonzero if delays are drawn (not constant). */
static inline int lgp_dist_active(const struct lgp_dist *d)
{
	return d->shape != LGP_DIST_CONSTANT;
}

/* The shape's name as LOGGP_LATENCY_DIST writes it ("paretonormal"). */
const char *lgp_dist_shape_name(enum lgp_dist_shape shape);

/* Q(u) of the shape in units of the spread (ns for empirical), u in [0, 1). */
double lgp_dist_quantile(const struct lgp_dist *d, double u);

/* The largest delay d can draw, in ns. */
uint64_t lgp_dist_max_ns(const struct lgp_dist *d);

/* A generator for the stream-th drawing context of d. */
void lgp_dist_rng_init(struct lgp_dist_rng *r, const struct lgp_dist *d,
		       uint64_t stream);

/* The next uniform number in [0, 1), uncorrelated. */
double lgp_dist_uniform(struct lgp_dist_rng *r);

/* The next delay in ns: never negative, mean_ns if d is constant. */
uint64_t lgp_dist_draw(const struct lgp_dist *d, struct lgp_dist_rng *r);

/*
 * A release that keeps a path in order: max(release_ns, *last_ns), which
 * becomes the path's last release.
 */
static inline uint64_t lgp_dist_in_order(uint64_t *last_ns, uint64_t release_ns)
{
	if (release_ns < *last_ns)
		release_ns = *last_ns;
	*last_ns = release_ns;
	return release_ns;
}

#ifdef __cplusplus
}
#endif

#endif /* LGP_DIST_H */

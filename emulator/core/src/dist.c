/* SPDX-License-Identifier: MIT */
/*
 * Delay distributions (dist.h).
 *
 * The parametric shapes are written from the formulas of iproute2's
 * netem table generators, not from their tables: the tables are
 * quantile functions sampled at 4096 steps and scaled by 8192 into 16-bit
 * integers, so the same functions with the same clipping give the same
 * shapes without netem's rounding to 1/8192 of the spread.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lgp/dist.h"
#include "lgp/env.h"
#include "lgp/knob.h"

/* netem's tables hold values * 8192 in a signed 16-bit integer. */
#define DIST_LO		(-32768.0 / 8192.0)
#define DIST_HI		(32767.0 / 8192.0)
#define DIST_ENV	lgp_setting_env(LGP_SETTING_LATENCY_DIST)
#define CORR_ENV	lgp_setting_env(LGP_SETTING_LATENCY_CORR)
#define DIST_LINE_MAX	256

static const char *const dist_names[] = {
	[LGP_DIST_CONSTANT] = "constant",
	[LGP_DIST_UNIFORM] = "uniform",
	[LGP_DIST_NORMAL] = "normal",
	[LGP_DIST_PARETO] = "pareto",
	[LGP_DIST_PARETONORMAL] = "paretonormal",
	[LGP_DIST_EMPIRICAL] = "empirical",
};

#define DIST_NSHAPES (sizeof(dist_names) / sizeof(dist_names[0]))

const char *lgp_dist_shape_name(enum lgp_dist_shape shape)
{
	return (unsigned int)shape < DIST_NSHAPES ? dist_names[shape] : NULL;
}

static double dist_clip(double x)
{
	return x < DIST_LO ? DIST_LO : x > DIST_HI ? DIST_HI : x;
}

/* The standard normal's quantile, by bisection of its CDF (table only). */
static double dist_normal_q(double u)
{
	double lo = -10.0, hi = 10.0, mid;
	int i;

	if (u <= 0.0)
		return DIST_LO;
	if (u >= 1.0)
		return DIST_HI;
	for (i = 0; i < 64; i++) {
		mid = (lo + hi) / 2;
		if (0.5 * erfc(-mid / sqrt(2.0)) < u)
			lo = mid;
		else
			hi = mid;
	}
	return dist_clip((lo + hi) / 2);
}

/* Pareto of shape 3, scale 1, less its mean 1.5, times 4/3. */
static double dist_pareto_q(double u)
{
	if (u >= 1.0)
		return DIST_HI;
	return dist_clip((pow(1.0 - u, -1.0 / 3.0) - 1.5) * 4.0 / 3.0);
}

static double dist_shape_q(enum lgp_dist_shape shape, double u)
{
	switch (shape) {
	case LGP_DIST_UNIFORM:
		return 2.0 * u - 1.0;
	case LGP_DIST_NORMAL:
		return dist_normal_q(u);
	case LGP_DIST_PARETO:
		return dist_pareto_q(u);
	case LGP_DIST_PARETONORMAL:
		return dist_clip((dist_normal_q(u) + 3.0 * dist_pareto_q(u)) / 4.0);
	default:
		return 0.0;
	}
}

static int dist_table(struct lgp_dist *d)
{
	size_t i;

	d->n = LGP_DIST_TABLE + 1;
	d->q = malloc(d->n * sizeof(*d->q));
	if (!d->q)
		return -ENOMEM;
	for (i = 0; i < d->n; i++)
		d->q[i] = dist_shape_q(d->shape, (double)i / LGP_DIST_TABLE);
	return 0;
}

/* One error line into err (may be NULL); returns rc. */
__attribute__((format(printf, 4, 5)))
static int dist_err(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static int dist_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Appends one delay to d->q, growing it; -ENOMEM or -E2BIG. */
static int dist_push(struct lgp_dist *d, size_t *cap, double v)
{
	double *q;

	if (d->n == LGP_DIST_EMPIRICAL_MAX)
		return -E2BIG;
	if (d->n == *cap) {
		*cap = *cap ? *cap * 2 : 1024;
		q = realloc(d->q, *cap * sizeof(*q));
		if (!q)
			return -ENOMEM;
		d->q = q;
	}
	d->q[d->n++] = v;
	return 0;
}

/* One line of an empirical file: a delay, a comment or nothing. */
static int dist_line(struct lgp_dist *d, size_t *cap, const char *line,
		     const char *path, size_t lineno, char *err, size_t errlen)
{
	char echo[LGP_ECHO_MAX + 1];
	uint64_t ns;
	int rc;

	if (!line[0] || line[0] == '#')
		return 0;
	if (lgp_knob_parse(LGP_KNOB_LATENCY, line, &ns, NULL, 0)) {
		lgp_echo(echo, sizeof(echo), line);
		return dist_err(err, errlen, -EINVAL, "bad value '%s' at %s:%zu "
				"for %s: expected one delay per line as %s", echo,
				path, lineno, DIST_ENV, lgp_knob_forms(LGP_KNOB_LATENCY));
	}
	rc = dist_push(d, cap, (double)ns);
	if (!rc)
		return 0;
	if (rc == -E2BIG)
		return dist_err(err, errlen, rc, "too many delays in %s '%s': at "
				"most %u", DIST_ENV, path, LGP_DIST_EMPIRICAL_MAX);
	return dist_err(err, errlen, rc, "out of memory for the delays of %s "
			"'%s'", DIST_ENV, path);
}

/* The delays of an empirical file, sorted, in d->q. */
static int dist_empirical(struct lgp_dist *d, const char *path, char *err,
			  size_t errlen)
{
	char line[DIST_LINE_MAX + 2], echo[LGP_ECHO_MAX + 1];
	size_t cap = 0, len, lineno = 0;
	FILE *f;
	int rc = 0;

	lgp_echo(echo, sizeof(echo), path);
	f = fopen(path, "re");
	if (!f) {
		rc = -errno;
		return dist_err(err, errlen, rc, "cannot read the delays of %s "
				"'%s': %s", DIST_ENV, echo, strerror(-rc));
	}
	while (!rc && fgets(line, sizeof(line), f)) {
		lineno++;
		len = strlen(line);
		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		else if (!feof(f))
			rc = dist_err(err, errlen, -EINVAL, "line %s:%zu of %s is "
				      "too long: expected one delay per line, at "
				      "most %d characters", echo, lineno,
				      DIST_ENV, DIST_LINE_MAX);
		if (!rc)
			rc = dist_line(d, &cap, line, echo, lineno, err, errlen);
	}
	fclose(f);
	if (!rc && !d->n)
		rc = dist_err(err, errlen, -EINVAL, "no delays in %s '%s': "
			      "expected one delay per line as %s", DIST_ENV,
			      echo, lgp_knob_forms(LGP_KNOB_LATENCY));
	if (!rc)
		qsort(d->q, d->n, sizeof(*d->q), dist_cmp);
	return rc;
}

static int dist_bad_spec(const char *text, char *err, size_t errlen)
{
	char echo[LGP_ECHO_MAX + 1];

	lgp_echo(echo, sizeof(echo), text);
	return dist_err(err, errlen, -EINVAL, "bad value '%s' for %s: expected "
			"constant, uniform:TIME, normal:TIME, pareto:TIME, "
			"paretonormal:TIME or empirical:FILE, TIME as %s", echo,
			DIST_ENV, lgp_knob_forms(LGP_KNOB_LATENCY));
}

static int dist_spec(struct lgp_dist *d, const char *text, char *err,
		     size_t errlen)
{
	const char *colon = strchr(text, ':');
	size_t n = colon ? (size_t)(colon - text) : strlen(text);
	unsigned int s;

	for (s = 0; s < DIST_NSHAPES; s++)
		if (strlen(dist_names[s]) == n && !strncmp(text, dist_names[s], n))
			break;
	if (s == DIST_NSHAPES || (s == LGP_DIST_CONSTANT) != !colon)
		return dist_bad_spec(text, err, errlen);
	d->shape = s;
	if (s == LGP_DIST_CONSTANT)
		return 0;
	if (s == LGP_DIST_EMPIRICAL)
		return colon[1] ? dist_empirical(d, colon + 1, err, errlen) :
				  dist_bad_spec(text, err, errlen);
	if (lgp_knob_parse(LGP_KNOB_LATENCY, colon + 1, &d->spread_ns, NULL, 0))
		return dist_bad_spec(text, err, errlen);
	return dist_table(d) ? dist_err(err, errlen, -ENOMEM, "out of memory "
					"for the table of %s", DIST_ENV) : 0;
}

/*
 * A number from 0 to 1: <digits>[.<digits>], no sign or exponent; read
 * digit by digit rather than with strtod, whose decimal point is the
 * locale's.
 */
static int dist_rho(const char *text, double *rho, char *err, size_t errlen)
{
	char echo[LGP_ECHO_MAX + 1];
	const char *s = text;
	double v = 0, scale = 0.1;

	for (; *s >= '0' && *s <= '9'; s++)
		v = v * 10 + (*s - '0');
	if (s != text && *s == '.' && s[1] >= '0' && s[1] <= '9')
		for (s++; *s >= '0' && *s <= '9'; s++, scale /= 10)
			v += (*s - '0') * scale;
	if (s != text && !*s && v <= 1.0) {
		*rho = v;
		return 0;
	}
	lgp_echo(echo, sizeof(echo), text);
	return dist_err(err, errlen, -EINVAL, "bad value '%s' for %s: expected "
			"a number from 0 to 1, e.g. 0.25", echo, CORR_ENV);
}

static int dist_seed(const char *text, uint64_t *seed, char *err, size_t errlen)
{
	char echo[LGP_ECHO_MAX + 1];
	unsigned __int128 v = 0;
	const char *s;

	for (s = text; *s >= '0' && *s <= '9' && v <= UINT64_MAX; s++)
		v = v * 10 + (unsigned int)(*s - '0');
	if (s != text && !*s && v <= UINT64_MAX) {
		*seed = (uint64_t)v;
		return 0;
	}
	lgp_echo(echo, sizeof(echo), text);
	return dist_err(err, errlen, -EINVAL, "bad value '%s' for %s: expected "
			"a whole number from 0 to %" PRIu64, echo,
			lgp_setting_env(LGP_SETTING_SEED), UINT64_MAX);
}

int lgp_dist_config(struct lgp_dist *d, const char *dist, const char *corr,
		    const char *seed, uint64_t mean_ns, char *err,
		    size_t errlen)
{
	int rc = 0;

	memset(d, 0, sizeof(*d));
	d->mean_ns = mean_ns;
	d->seed = 1;
	if (err && errlen)
		err[0] = '\0';
	if (seed)
		rc = dist_seed(seed, &d->seed, err, errlen);
	if (!rc && corr)
		rc = dist_rho(corr, &d->rho, err, errlen);
	if (!rc && dist)
		rc = dist_spec(d, dist, err, errlen);
	if (!rc && corr && !lgp_dist_active(d)) {
		char echo[LGP_ECHO_MAX + 1];

		lgp_echo(echo, sizeof(echo), corr);
		rc = dist_err(err, errlen, -EINVAL, "bad value '%s' for %s: "
			      "expected it with a %s other than constant (it "
			      "correlates drawn delays)", echo, CORR_ENV, DIST_ENV);
	}
	if (rc) {
		lgp_dist_fini(d);
		d->mean_ns = mean_ns;
	}
	return rc;
}

int lgp_dist_from_env(struct lgp_dist *d, uint64_t mean_ns, char *err,
		      size_t errlen)
{
	return lgp_dist_config(d,
			       getenv(lgp_setting_env(LGP_SETTING_LATENCY_DIST)),
			       getenv(lgp_setting_env(LGP_SETTING_LATENCY_CORR)),
			       getenv(lgp_setting_env(LGP_SETTING_SEED)),
			       mean_ns, err, errlen);
}

void lgp_dist_fini(struct lgp_dist *d)
{
	free(d->q);
	memset(d, 0, sizeof(*d));
}

double lgp_dist_quantile(const struct lgp_dist *d, double u)
{
	double pos;
	size_t i;

	if (!lgp_dist_active(d))
		return 0.0;
	if (d->shape == LGP_DIST_EMPIRICAL) {
		i = (size_t)(u * (double)d->n);
		return d->q[i < d->n ? i : d->n - 1];
	}
	pos = u * LGP_DIST_TABLE;
	i = (size_t)pos;
	if (i >= LGP_DIST_TABLE)
		return d->q[LGP_DIST_TABLE];
	return d->q[i] + (pos - (double)i) * (d->q[i + 1] - d->q[i]);
}

/* mean + x in ns, rounded, never below 0 nor above UINT64_MAX. */
static uint64_t dist_ns(uint64_t mean_ns, double x)
{
	double v = (double)mean_ns + x;

	if (!(v > 0.0))
		return 0;
	if (v >= 18446744073709551615.0)
		return UINT64_MAX;
	return (uint64_t)(v + 0.5);
}

uint64_t lgp_dist_max_ns(const struct lgp_dist *d)
{
	if (!lgp_dist_active(d))
		return d->mean_ns;
	if (d->shape == LGP_DIST_EMPIRICAL)
		return dist_ns(d->mean_ns, d->q[d->n - 1]);
	return dist_ns(d->mean_ns, (double)d->spread_ns * d->q[LGP_DIST_TABLE]);
}

/* splitmix64 (Steele, Lea and Flood, 2014): one add and two multiplies. */
static uint64_t dist_next(struct lgp_dist_rng *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

double lgp_dist_uniform(struct lgp_dist_rng *r)
{
	return (double)(dist_next(r) >> 11) * 0x1.0p-53;
}

void lgp_dist_rng_init(struct lgp_dist_rng *r, const struct lgp_dist *d,
		       uint64_t stream)
{
	r->state = d->seed;
	/* A stream's start far from the others': its index mixed in. */
	r->state ^= dist_next(&(struct lgp_dist_rng){ stream, 0 });
	r->last = lgp_dist_uniform(r);
}

uint64_t lgp_dist_draw(const struct lgp_dist *d, struct lgp_dist_rng *r)
{
	double u, x;

	if (!lgp_dist_active(d))
		return d->mean_ns;
	u = lgp_dist_uniform(r);
	if (d->rho > 0.0) {
		u = (1.0 - d->rho) * u + d->rho * r->last;
		r->last = u;
	}
	x = lgp_dist_quantile(d, u);
	if (d->shape != LGP_DIST_EMPIRICAL)
		x *= (double)d->spread_ns;
	return dist_ns(d->mean_ns, x);
}

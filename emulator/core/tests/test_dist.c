/* SPDX-License-Identifier: MIT */
/*
 * Unit test of dist.h: each shape's draws against its definition (netem's
 * formulas, written here again as the oracle), the empirical file and its
 * bad input, correlation, seeds and streams, the clamp at zero, order.
 *
 * Fidelity is the Kolmogorov-Smirnov distance D between N_DRAWS draws and
 * the shape's CDF, held below KS_BOUND: 1.95 / sqrt(20000) = 0.0138 is the
 * distance a true sample exceeds with probability 0.001, and the seed is
 * fixed, so the test is deterministic and a wrong shape (D of several
 * hundredths) cannot pass.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "lgp/dist.h"
#include "lgp/env.h"
#include "lgp/knob.h"

#define N_DRAWS		20000
#define KS_BOUND	0.015
#define MEAN_NS		100000.0
#define SPREAD_NS	20000.0
/* netem's 16-bit tables: values * 8192 in [-32768, 32767] */
#define HI		(32767.0 / 8192.0)
#define LO		(-4.0)

static double clip(double x)
{
	return x < LO ? LO : x > HI ? HI : x;
}

static double norm_cdf(double z)
{
	return 0.5 * erfc(-z / sqrt(2.0));
}

/* Phi^-1 by bisection then Newton steps: the oracle, not the table. */
static double norm_q(double u)
{
	double lo = -12, hi = 12, x;
	int i;

	for (i = 0; i < 24; i++) {
		x = (lo + hi) / 2;
		if (norm_cdf(x) < u)
			lo = x;
		else
			hi = x;
	}
	x = (lo + hi) / 2;
	for (i = 0; i < 3; i++)
		x -= (norm_cdf(x) - u) / (exp(-x * x / 2) / sqrt(2 * M_PI));
	return x;
}

/* netem pareto.c: Pareto(scale 1, shape 3) less 1.5, times 4/3. */
static double pareto_q(double u)
{
	return (pow(1 - u, -1.0 / 3) - 1.5) * 4 / 3;
}

/* CDFs in units of the spread; left: the limit from below. */
static double cdf_uniform(double t, int left)
{
	(void)left;
	return t <= -1 ? 0 : t >= 1 ? 1 : (t + 1) / 2;
}

static double cdf_normal(double t, int left)
{
	(void)left;
	return t < LO ? 0 : t >= HI ? 1 : norm_cdf(t);
}

static double cdf_pareto(double t, int left)
{
	/* the cap is an atom at HI; draws rounded to the ns land within 1e-4 */
	if (t >= HI - 1e-4)
		return left ? 1 - pow(1.5 + 0.75 * HI, -3) : 1;
	if (t <= -2.0 / 3)
		return 0;
	return 1 - pow(1.5 + 0.75 * t, -3);
}

/* netem paretonormal.c: .25 normal + .75 pareto at the same quantile. */
static double pn_q(double u)
{
	return clip((clip(norm_q(u)) + 3 * clip(pareto_q(u))) / 4);
}

static double cdf_paretonormal(double t, int left)
{
	double lo = 0, hi = 1, u;
	int i;

	(void)left;
	for (i = 0; i < 34; i++) {
		u = (lo + hi) / 2;
		if (pn_q(u) <= t)
			lo = u;
		else
			hi = u;
	}
	return lo;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/*
 * sup |F_n - F| over the draws, F's atoms included: at each distinct
 * value v, F_n(v) against F(v) and F_n(v-) against F(v-).
 */
static double ks(uint64_t *x, size_t n, double (*cdf)(double, int),
		 double mean, double scale)
{
	double d = 0, a, b;
	size_t i = 0, j;

	qsort(x, n, sizeof(*x), cmp_u64);
	while (i < n) {
		for (j = i; j < n && x[j] == x[i]; j++)
			;
		a = fabs((double)j / n - cdf(((double)x[i] - mean) / scale, 0));
		b = fabs((double)i / n - cdf(((double)x[i] - mean) / scale, 1));
		d = fmax(d, fmax(a, b));
		i = j;
	}
	return d;
}

static void draws(const struct lgp_dist *d, uint64_t *x, size_t n)
{
	struct lgp_dist_rng r;
	size_t i;

	lgp_dist_rng_init(&r, d, 0);
	for (i = 0; i < n; i++)
		x[i] = lgp_dist_draw(d, &r);
}

static void test_shape(const char *spec, double (*cdf)(double, int))
{
	static uint64_t x[N_DRAWS];
	char err[LGP_KNOB_ERRLEN];
	struct lgp_dist d;
	double D;

	CHECK_EQ_INT(lgp_dist_config(&d, spec, NULL, NULL, (uint64_t)MEAN_NS,
				     err, sizeof(err)), 0);
	CHECK_STR(err, "");
	draws(&d, x, N_DRAWS);
	D = ks(x, N_DRAWS, cdf, MEAN_NS, SPREAD_NS);
	if (!CHECK(D < KS_BOUND))
		fprintf(stderr, "    %s: KS distance %.4f\n", spec, D);
	/* the largest draw is the shape's largest value, never above */
	CHECK(x[N_DRAWS - 1] <= lgp_dist_max_ns(&d));
	lgp_dist_fini(&d);
}

/* A different shape is told apart: the bound is not loose. */
static void test_ks_discriminates(void)
{
	static uint64_t x[N_DRAWS];
	struct lgp_dist d;

	CHECK_EQ_INT(lgp_dist_config(&d, "paretonormal:20us", NULL, NULL,
				     (uint64_t)MEAN_NS, NULL, 0), 0);
	draws(&d, x, N_DRAWS);
	CHECK(ks(x, N_DRAWS, cdf_normal, MEAN_NS, SPREAD_NS) > 4 * KS_BOUND);
	lgp_dist_fini(&d);
}

static const double emp_values_us[] = { 10, 20, 20, 35, 50, 80, 100, 250 };
#define EMP_N (sizeof(emp_values_us) / sizeof(emp_values_us[0]))

static double cdf_empirical(double t, int left)
{
	size_t i, c = 0;

	for (i = 0; i < EMP_N; i++)
		c += left ? emp_values_us[i] * 1000 < t :
			    emp_values_us[i] * 1000 <= t;
	return (double)c / EMP_N;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!CHECK(f))
		return;
	fputs(text, f);
	fclose(f);
}

static void test_empirical(const char *dir)
{
	static uint64_t x[N_DRAWS];
	char path[512], spec[600], err[LGP_KNOB_ERRLEN];
	struct lgp_dist d;
	double D;

	snprintf(path, sizeof(path), "%s/delays.txt", dir);
	snprintf(spec, sizeof(spec), "empirical:%s", path);
	/* every time form of a knob, comments and blank lines */
	write_file(path, "# measured\n10us\n20000ns\n\n0.02ms\n35 us\n50us\n"
		   "80us\n0.1ms\n250us");
	CHECK_EQ_INT(lgp_dist_config(&d, spec, NULL, NULL, 0, err, sizeof(err)), 0);
	CHECK_STR(err, "");
	CHECK_EQ_U64(d.n, EMP_N);
	CHECK_EQ_U64(lgp_dist_max_ns(&d), 250000);
	draws(&d, x, N_DRAWS);
	D = ks(x, N_DRAWS, cdf_empirical, 0, 1);
	if (!CHECK(D < KS_BOUND))
		fprintf(stderr, "    empirical: KS distance %.4f\n", D);
	lgp_dist_fini(&d);

	/* LOGGP_LATENCY is added to the file's delays */
	CHECK_EQ_INT(lgp_dist_config(&d, spec, NULL, NULL, 5000, NULL, 0), 0);
	draws(&d, x, 1000);
	qsort(x, 1000, sizeof(*x), cmp_u64);
	CHECK_EQ_U64(x[0], 15000);
	CHECK_EQ_U64(x[999], 255000);
	CHECK_EQ_U64(lgp_dist_max_ns(&d), 255000);
	lgp_dist_fini(&d);

	/* bad lines name the file, the line and what is accepted */
	write_file(path, "10us\n# ok\n5\n");
	CHECK_EQ_INT(lgp_dist_config(&d, spec, NULL, NULL, 0, err, sizeof(err)),
		     -EINVAL);
	{
		char want[1024];

		snprintf(want, sizeof(want), "bad value '5' at %s:3 for "
			 "LOGGP_LATENCY_DIST: expected one delay per line as "
			 "<number>{ns|us|ms|s}, e.g. 10us or 2.5ms", path);
		CHECK_STR(err, want);
	}
	CHECK(!lgp_dist_active(&d));
	write_file(path, "10us\n-3us\n");
	CHECK_EQ_INT(lgp_dist_config(&d, spec, NULL, NULL, 0, err, sizeof(err)),
		     -EINVAL);
	CHECK(strstr(err, "bad value '-3us' at ") != NULL);
	{
		char longline[300];

		memset(longline, '1', 257);
		strcpy(longline + 257, "us\n");
		write_file(path, longline);
		CHECK_EQ_INT(lgp_dist_config(&d, spec, NULL, NULL, 0, err,
					     sizeof(err)), -EINVAL);
		CHECK(strstr(err, ":1 of LOGGP_LATENCY_DIST is too long: expected "
			     "one delay per line, at most 256 characters") != NULL);
	}
	write_file(path, "# nothing\n\n");
	CHECK_EQ_INT(lgp_dist_config(&d, spec, NULL, NULL, 0, err, sizeof(err)),
		     -EINVAL);
	CHECK(strstr(err, "no delays in LOGGP_LATENCY_DIST '") == err);
	unlink(path);
	CHECK_EQ_INT(lgp_dist_config(&d, spec, NULL, NULL, 0, err, sizeof(err)),
		     -ENOENT);
	CHECK(strstr(err, "cannot read the delays of LOGGP_LATENCY_DIST '") == err);
	CHECK(strstr(err, "No such file or directory") != NULL);
}

static void test_bad_settings(void)
{
	static const char *const bad_dist[] = {
		"gauss:20us", "normal", "normal:", "normal:20", "normal:-5us",
		"constant:5us", "empirical:", "", "Normal:20us", "normal:20us ",
	};
	static const char *const bad_corr[] = {
		"1.5", "-0.1", "25%", "", ".5", "0.", "1e-1", "0.5 ",
	};
	static const char *const bad_seed[] = { "", "-1", "x", "1.5",
		"18446744073709551616" };
	char err[LGP_KNOB_ERRLEN];
	struct lgp_dist d;
	size_t i;

	CHECK_EQ_INT(lgp_dist_config(&d, "gauss:20us", NULL, NULL, 0, err,
				     sizeof(err)), -EINVAL);
	CHECK_STR(err, "bad value 'gauss:20us' for LOGGP_LATENCY_DIST: expected "
		  "constant, uniform:TIME, normal:TIME, pareto:TIME, "
		  "paretonormal:TIME or empirical:FILE, TIME as "
		  "<number>{ns|us|ms|s}, e.g. 10us or 2.5ms");
	for (i = 0; i < sizeof(bad_dist) / sizeof(bad_dist[0]); i++) {
		err[0] = '\0';
		if (!CHECK(lgp_dist_config(&d, bad_dist[i], NULL, NULL, 0, err,
					   sizeof(err)) == -EINVAL))
			fprintf(stderr, "    accepted '%s'\n", bad_dist[i]);
		CHECK(strstr(err, "for LOGGP_LATENCY_DIST: expected constant") != NULL);
		CHECK(!strchr(err, '\n'));
	}
	CHECK_EQ_INT(lgp_dist_config(&d, "normal:20us", "1.5", NULL, 0, err,
				     sizeof(err)), -EINVAL);
	CHECK_STR(err, "bad value '1.5' for LOGGP_LATENCY_CORR: expected a "
		  "number from 0 to 1, e.g. 0.25");
	for (i = 0; i < sizeof(bad_corr) / sizeof(bad_corr[0]); i++)
		if (!CHECK(lgp_dist_config(&d, "normal:20us", bad_corr[i], NULL,
					   0, err, sizeof(err)) == -EINVAL))
			fprintf(stderr, "    accepted '%s'\n", bad_corr[i]);
	/* a correlation of nothing drawn would be ignored: refused */
	CHECK_EQ_INT(lgp_dist_config(&d, NULL, "0.5", NULL, 0, err, sizeof(err)),
		     -EINVAL);
	CHECK(strstr(err, "LOGGP_LATENCY_CORR: expected it with a "
		     "LOGGP_LATENCY_DIST") != NULL);
	CHECK_EQ_INT(lgp_dist_config(&d, "x", NULL, "-1", 0, err, sizeof(err)),
		     -EINVAL);
	CHECK_STR(err, "bad value '-1' for LOGGP_SEED: expected a whole number "
		  "from 0 to 18446744073709551615");
	for (i = 0; i < sizeof(bad_seed) / sizeof(bad_seed[0]); i++)
		CHECK_EQ_INT(lgp_dist_config(&d, NULL, NULL, bad_seed[i], 0, err,
					     sizeof(err)), -EINVAL);

	/* good ones */
	CHECK_EQ_INT(lgp_dist_config(&d, NULL, NULL, "18446744073709551615",
				     7, err, sizeof(err)), 0);
	CHECK(!lgp_dist_active(&d));
	CHECK_EQ_U64(d.seed, UINT64_MAX);
	CHECK_EQ_INT(lgp_dist_config(&d, "constant", NULL, NULL, 7, err,
				     sizeof(err)), 0);
	CHECK(!lgp_dist_active(&d));
	{
		struct lgp_dist_rng r;

		lgp_dist_rng_init(&r, &d, 0);
		CHECK_EQ_U64(lgp_dist_draw(&d, &r), 7);
	}
	CHECK_EQ_INT(lgp_dist_config(&d, "uniform:2.5 us", "1", "0", 7, err,
				     sizeof(err)), 0);
	CHECK_EQ_U64(d.spread_ns, 2500);
	CHECK(d.rho == 1.0);
	lgp_dist_fini(&d);
	CHECK_EQ_INT(lgp_dist_config(&d, "pareto:0ns", "0.25", NULL, 7, err,
				     sizeof(err)), 0);
	CHECK(d.rho == 0.25);
	lgp_dist_fini(&d);
}

/* Pearson correlation of consecutive draws, and their variance. */
static double lag1(const uint64_t *x, size_t n, double *var)
{
	double m = 0, v = 0, c = 0;
	size_t i;

	for (i = 0; i < n; i++)
		m += (double)x[i] / n;
	for (i = 0; i < n; i++)
		v += ((double)x[i] - m) * ((double)x[i] - m);
	for (i = 1; i < n; i++)
		c += ((double)x[i] - m) * ((double)x[i - 1] - m);
	*var = v / n;
	return c / v;
}

static void test_correlation(void)
{
	static uint64_t x[N_DRAWS];
	struct lgp_dist d;
	double r, var0, var5;

	CHECK_EQ_INT(lgp_dist_config(&d, "uniform:20us", NULL, NULL,
				     (uint64_t)MEAN_NS, NULL, 0), 0);
	draws(&d, x, N_DRAWS);
	r = lag1(x, N_DRAWS, &var0);
	if (!CHECK(fabs(r) < 0.03))
		fprintf(stderr, "    rho 0: lag-1 correlation %.3f\n", r);
	lgp_dist_fini(&d);

	CHECK_EQ_INT(lgp_dist_config(&d, "uniform:20us", "0.5", NULL,
				     (uint64_t)MEAN_NS, NULL, 0), 0);
	draws(&d, x, N_DRAWS);
	r = lag1(x, N_DRAWS, &var5);
	if (!CHECK(fabs(r - 0.5) < 0.03))
		fprintf(stderr, "    rho 0.5: lag-1 correlation %.3f\n", r);
	/* netem's correlation narrows: variance (1 - rho) / (1 + rho) */
	if (!CHECK(fabs(var5 / var0 - 1.0 / 3) < 0.03))
		fprintf(stderr, "    rho 0.5: variance ratio %.3f\n", var5 / var0);
	lgp_dist_fini(&d);

	/* rho 1: the first u forever */
	CHECK_EQ_INT(lgp_dist_config(&d, "normal:20us", "1", NULL,
				     (uint64_t)MEAN_NS, NULL, 0), 0);
	draws(&d, x, 100);
	CHECK_EQ_U64(x[99], x[0]);
	lgp_dist_fini(&d);
}

static void test_seed_and_streams(void)
{
	struct lgp_dist a, b;
	struct lgp_dist_rng r1, r2, r3, r4;
	int same12 = 1, same13 = 1, same14 = 1, i;
	uint64_t v1;

	CHECK_EQ_INT(lgp_dist_config(&a, "normal:20us", NULL, "42",
				     (uint64_t)MEAN_NS, NULL, 0), 0);
	CHECK_EQ_INT(lgp_dist_config(&b, "normal:20us", NULL, "43",
				     (uint64_t)MEAN_NS, NULL, 0), 0);
	lgp_dist_rng_init(&r1, &a, 0);
	lgp_dist_rng_init(&r2, &a, 0);
	lgp_dist_rng_init(&r3, &a, 1);
	lgp_dist_rng_init(&r4, &b, 0);
	for (i = 0; i < 100; i++) {
		v1 = lgp_dist_draw(&a, &r1);
		same12 &= v1 == lgp_dist_draw(&a, &r2);
		same13 &= v1 == lgp_dist_draw(&a, &r3);
		same14 &= v1 == lgp_dist_draw(&b, &r4);
	}
	CHECK(same12);
	CHECK(!same13);
	CHECK(!same14);
	lgp_dist_fini(&a);
	lgp_dist_fini(&b);
}

static void test_clamp_and_order(void)
{
	static uint64_t x[N_DRAWS];
	struct lgp_dist d;
	size_t i, zeros = 0;
	uint64_t last = 0;

	/* normal around 0: half the draws would be negative, drawn as 0 */
	CHECK_EQ_INT(lgp_dist_config(&d, "normal:20us", NULL, NULL, 0, NULL, 0), 0);
	draws(&d, x, N_DRAWS);
	for (i = 0; i < N_DRAWS; i++)
		zeros += x[i] == 0;
	CHECK(fabs((double)zeros / N_DRAWS - 0.5) < 0.02);
	lgp_dist_fini(&d);

	CHECK_EQ_U64(lgp_dist_in_order(&last, 50), 50);
	CHECK_EQ_U64(lgp_dist_in_order(&last, 30), 50);
	CHECK_EQ_U64(last, 50);
	CHECK_EQ_U64(lgp_dist_in_order(&last, 70), 70);
}

/* The shapes' fixed points: netem's formulas at u = 0, 1/2 and the end. */
static void test_quantiles(void)
{
	struct lgp_dist d;

	lgp_dist_config(&d, "normal:1us", NULL, NULL, 0, NULL, 0);
	CHECK(fabs(lgp_dist_quantile(&d, 0.5)) < 1e-6);
	CHECK(fabs(lgp_dist_quantile(&d, 0.975) - 1.959964) < 1e-3);
	CHECK(lgp_dist_quantile(&d, 0) == LO);
	lgp_dist_fini(&d);
	lgp_dist_config(&d, "pareto:1us", NULL, NULL, 0, NULL, 0);
	CHECK(fabs(lgp_dist_quantile(&d, 0) + 2.0 / 3) < 1e-9);
	CHECK(fabs(lgp_dist_quantile(&d, 0.875) - 2.0 / 3) < 1e-3);
	CHECK(lgp_dist_quantile(&d, 0.999999) == HI);
	lgp_dist_fini(&d);
	lgp_dist_config(&d, "uniform:1us", NULL, NULL, 0, NULL, 0);
	CHECK(fabs(lgp_dist_quantile(&d, 0.25) + 0.5) < 1e-9);
	lgp_dist_fini(&d);
	CHECK_STR(lgp_dist_shape_name(LGP_DIST_PARETONORMAL), "paretonormal");
}

int main(void)
{
	char dir[] = "/tmp/test_dist.XXXXXX";

	test_shape("uniform:20us", cdf_uniform);
	test_shape("normal:20us", cdf_normal);
	test_shape("pareto:20us", cdf_pareto);
	test_shape("paretonormal:20us", cdf_paretonormal);
	test_ks_discriminates();
	if (CHECK(mkdtemp(dir))) {
		test_empirical(dir);
		rmdir(dir);
	}
	test_bad_settings();
	test_correlation();
	test_seed_and_streams();
	test_clamp_and_order();
	test_quantiles();
	return check_done("test_dist");
}

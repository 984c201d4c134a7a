/* SPDX-License-Identifier: MIT */
/* Unit test of calib_stats: percentiles and the least-squares line. */
#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "calib_stats.h"

static int failures;

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: check failed: %s\n",	\
				__FILE__, __LINE__, #cond);		\
			failures++;					\
		}							\
	} while (0)

static int near(double a, double b)
{
	return fabs(a - b) < 1e-9;
}

static void test_percentile(void)
{
	const double odd[] = { 5, 1, 3 };
	const double even[] = { 4, 1, 3, 2 };
	double hundred[100], m, qs[3];
	const double ps[] = { 50, 99, 10 }, bad[] = { 50, 101 };
	int i;

	CHECK(!calib_percentile(odd, 3, 50, &m) && near(m, 3));
	CHECK(!calib_percentile(even, 4, 50, &m) && near(m, 2.5));
	CHECK(!calib_percentile(odd, 3, 0, &m) && near(m, 1));
	CHECK(!calib_percentile(odd, 3, 100, &m) && near(m, 5));
	CHECK(!calib_percentile(odd, 1, 99, &m) && near(m, 5));
	/* The input keeps its order: the copy is sorted, not the samples. */
	CHECK(near(odd[0], 5) && near(even[0], 4));

	for (i = 0; i < 100; i++)
		hundred[i] = 99 - i;
	CHECK(!calib_percentiles(hundred, 100, ps, qs, 3));
	CHECK(near(qs[0], 49.5) && near(qs[1], 98.01) && near(qs[2], 9.9));
	CHECK(calib_percentiles(hundred, 100, bad, qs, 2) == -EINVAL);

	CHECK(calib_percentile(odd, 0, 50, &m) == -EINVAL);
	CHECK(calib_percentile(odd, 3, -1, &m) == -EINVAL);
	CHECK(calib_percentile(odd, 3, 100.5, &m) == -EINVAL);
	CHECK(calib_percentile(odd, 3, NAN, &m) == -EINVAL);
}

static void test_linfit(void)
{
	const double x[] = { 1, 64, 1024, 4096 };
	const double y[] = { 10.5, 73.5, 1033.5, 4105.5 };	/* 9.5 + x */
	const double flat[] = { 7, 7, 7, 7 };
	const double same[] = { 3, 3, 3 };
	const double noisy[] = { 1, 3, 2, 5 };
	double b, a, r2;

	CHECK(!calib_linfit(x, y, 4, &b, &a, &r2));
	CHECK(near(b, 1) && near(a, 9.5) && near(r2, 1));

	CHECK(!calib_linfit(x, flat, 4, &b, &a, &r2));
	CHECK(near(b, 0) && near(a, 7) && near(r2, 1));

	CHECK(!calib_linfit(x, noisy, 4, &b, &a, &r2));
	CHECK(r2 > 0 && r2 < 1);

	CHECK(calib_linfit(x, y, 1, &b, &a, &r2) == -EINVAL);
	CHECK(calib_linfit(same, same, 3, &b, &a, &r2) == -EINVAL);
}

int main(void)
{
	test_percentile();
	test_linfit();
	if (failures)
		fprintf(stderr, "calib_stats_test: %d failure(s)\n", failures);
	return failures ? 1 : 0;
}

/* SPDX-License-Identifier: MIT */
/* Percentiles and least squares; contracts in calib_stats.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "calib_stats.h"

static int calib_double_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The p-th percentile of the n sorted samples s. */
static double calib_sorted_percentile(const double *s, size_t n, double p)
{
	double rank = p / 100.0 * (double)(n - 1), frac;
	size_t lo = (size_t)rank;

	frac = rank - (double)lo;
	return lo + 1 < n ? s[lo] + frac * (s[lo + 1] - s[lo]) : s[lo];
}

int calib_percentiles(const double *v, size_t n, const double *p, double *out,
		      size_t k)
{
	double *s;
	size_t i;

	if (!n)
		return -EINVAL;
	for (i = 0; i < k; i++)
		if (!(p[i] >= 0.0 && p[i] <= 100.0))
			return -EINVAL;
	s = malloc(n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), calib_double_cmp);
	for (i = 0; i < k; i++)
		out[i] = calib_sorted_percentile(s, n, p[i]);
	free(s);
	return 0;
}

int calib_percentile(const double *v, size_t n, double p, double *out)
{
	return calib_percentiles(v, n, &p, out, 1);
}

int calib_linfit(const double *x, const double *y, size_t n,
		 double *slope, double *intercept, double *r2)
{
	double mx = 0, my = 0, sxx = 0, sxy = 0, syy = 0, ssr = 0, e;
	size_t i;

	if (n < 2)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		mx += x[i];
		my += y[i];
	}
	mx /= (double)n;
	my /= (double)n;
	for (i = 0; i < n; i++) {
		sxx += (x[i] - mx) * (x[i] - mx);
		sxy += (x[i] - mx) * (y[i] - my);
		syy += (y[i] - my) * (y[i] - my);
	}
	if (sxx == 0.0)
		return -EINVAL;

	*slope = sxy / sxx;
	*intercept = my - *slope * mx;
	for (i = 0; i < n; i++) {
		e = y[i] - (*intercept + *slope * x[i]);
		ssr += e * e;
	}
	*r2 = syy > 0.0 ? 1.0 - ssr / syy : 1.0;
	return 0;
}

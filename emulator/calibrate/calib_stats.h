/* SPDX-License-Identifier: MIT */
/*
 * Order statistics and a least-squares line for loggp-calibrate.
 *
 * Pure functions over caller-owned arrays; nothing here allocates except
 * calib_percentile(), which sorts a private copy so the caller's sample
 * order (time order) is kept.
 */
#ifndef CALIB_STATS_H
#define CALIB_STATS_H

#include <stddef.h>

/*
 * The p-th percentile (0 <= p <= 100) of n samples with linear
 * interpolation between closest ranks (the "R-7"/NumPy default), so the
 * median of an even count is the mean of the two middle values.
 * Returns 0 with *out set, -EINVAL for n == 0 or p outside [0, 100],
 * -ENOMEM if the private copy cannot be made.
 */
int calib_percentile(const double *v, size_t n, double p, double *out);

/* The k percentiles p[] into out[] with one sort, with the errors of the above. */
int calib_percentiles(const double *v, size_t n, const double *p, double *out,
		      size_t k);

/*
 * Ordinary least squares y = a + b x over n points.  Stores the slope,
 * the intercept and the coefficient of determination R^2 (1 when all y
 * are equal and the fit is exact).  Returns -EINVAL for n < 2 or when all
 * x are equal (the slope is undefined).
 */
int calib_linfit(const double *x, const double *y, size_t n,
		 double *slope, double *intercept, double *r2);

#endif /* CALIB_STATS_H */

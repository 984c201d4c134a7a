/* SPDX-License-Identifier: MIT */
/*
 * loggp-calibrate's clock: emulator/core's lgp_now_ns() when the core is
 * part of the build (the shim measures with the same clock), else
 * CLOCK_MONOTONIC.  Nanoseconds, comparable within one process.
 */
#ifndef CALIB_CLOCK_H
#define CALIB_CLOCK_H

#include <stdint.h>

#ifdef CALIB_HAVE_LGP_CORE
#include <lgp/clock.h>

static inline uint64_t calib_now_ns(void)
{
	return lgp_now_ns();
}
#else
#include <time.h>

static inline uint64_t calib_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
#endif

#endif /* CALIB_CLOCK_H */

/* SPDX-License-Identifier: MIT */
/*
 * Monotonic nanosecond clock and calibrated busy-wait.
 *
 * lgp_clock_init() picks the time source once per process: the invariant
 * TSC (cpuid leaf 0x80000007 bit 8) scaled against CLOCK_MONOTONIC over a
 * short calibration, or CLOCK_MONOTONIC itself when the TSC is not
 * invariant or LOGGP_CLOCK=monotonic is set.  LOGGP_CLOCK=tsc uses the
 * TSC even when cpuid does not report it invariant (some VMs hide the bit);
 * any other LOGGP_CLOCK value (empty included) makes init return -EINVAL
 * and use CLOCK_MONOTONIC (the shim and loggp-calibrate refuse such a value
 * before, with lgp_env_check()).  The calibration sleeps about 10 ms.  Init is
 * idempotent and thread-safe (pthread_once); lgp_now_ns() calls it lazily
 * on first use, so the first call may take that long.
 *
 * lgp_clock_init_tsc() is the start for a program that knows better than
 * cpuid that the TSC is usable (the DPDK wire).
 *
 * Values are comparable only inside one process.
 */
#ifndef LGP_CLOCK_H
#define LGP_CLOCK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum lgp_clock_source {
	LGP_CLOCK_MONOTONIC,
	LGP_CLOCK_TSC,
};

/* Returns 0, or -EINVAL if LOGGP_CLOCK names an unknown source. */
int lgp_clock_init(void);

/*
 * For a program that knows the TSC ticks at a constant rate and has its
 * nominal rate tsc_hz (a DPDK application: the EAL requires such a TSC
 * and reports rte_get_tsc_hz()): uses the TSC whatever cpuid and
 * LOGGP_CLOCK say, at the rate lgp_clock_init() measures, or at tsc_hz
 * when the measurement fails or is more than 5 % off it (a nominal rate
 * can be 0.15 % off the real one in a VM, so the measured one is
 * preferred).  Must run before anything else of this clock, since
 * lgp_now_ns() initialises it lazily.  Returns 0; -EINVAL for tsc_hz 0
 * (nothing done); -ENOTSUP where there is no TSC to read (not x86): the
 * clock is then CLOCK_MONOTONIC; -EALREADY when the clock was already
 * initialised: it keeps its source.
 */
int lgp_clock_init_tsc(uint64_t tsc_hz);

enum lgp_clock_source lgp_clock_source(void);

/* Nanoseconds since an arbitrary process-local origin. */
uint64_t lgp_now_ns(void);

/* Busy-wait (with a pause hint) until lgp_now_ns() >= deadline_ns. */
void lgp_spin_until(uint64_t deadline_ns);

/* Busy-wait for ns nanoseconds of wall time; 0 returns at once. */
void lgp_spin_ns(uint64_t ns);

/* Measured cost of one lgp_now_ns() call in nanoseconds (after init). */
uint64_t lgp_clock_read_cost_ns(void);

#ifdef __cplusplus
}
#endif

#endif /* LGP_CLOCK_H */

/* SPDX-License-Identifier: MIT */
/*
 * Monotonic clock and calibrated busy-wait (clock.h).
 *
 * The invariant TSC is read in a few nanoseconds without a system call and
 * ticks at a constant rate across frequency changes and idle states, so it
 * is the preferred source.  Its rate is measured once against
 * CLOCK_MONOTONIC and applied as a 32.32 fixed-point multiplier; the time
 * it reports starts at the CLOCK_MONOTONIC reading of the calibration, so
 * both sources give values on the same scale.  A caller that knows the
 * TSC's nominal rate (lgp_clock_init_tsc()) has the measurement checked
 * against it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lgp/clock.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#define CLOCK_HAVE_TSC 1
#else
#define CLOCK_HAVE_TSC 0
#endif

#define CLOCK_NS_PER_S		1000000000ULL
/*
 * Calibration interval: long enough that the two bracketing clock reads
 * (tens of ns each) leave the rate error near 10 ppm, short enough not to
 * be noticed at process start.  The thread sleeps, it does not spin.
 */
#define CLOCK_CALIB_NS		10000000ULL
/* Paired reads per calibration end point; the tightest bracket wins. */
#define CLOCK_CALIB_TRIES	16
/* Reads per batch and batches when measuring lgp_now_ns()'s own cost. */
#define CLOCK_COST_READS	256
#define CLOCK_COST_BATCHES	8
/* A measured TSC rate further than 1/20 (5 %) from a nominal one is wrong. */
#define CLOCK_HINT_TOLERANCE	20

struct clock_state {
	enum lgp_clock_source source;
	int init_rc;
	uint64_t tsc0;		/* TSC at the calibration origin */
	uint64_t ns0;		/* CLOCK_MONOTONIC ns at the same instant */
	uint64_t mult;		/* ns per tick, 32.32 fixed point */
	uint64_t read_cost_ns;
	uint64_t hint_hz;	/* lgp_clock_init_tsc()'s nominal rate, or 0 */
	int hinted;		/* the setup used hint_hz */
	int ready;		/* set last, with release ordering */
};

static struct clock_state clk;
static pthread_once_t clock_once = PTHREAD_ONCE_INIT;

static uint64_t clock_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * CLOCK_NS_PER_S + (uint64_t)ts.tv_nsec;
}

static inline void clock_relax(void)
{
#if CLOCK_HAVE_TSC
	_mm_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

#if CLOCK_HAVE_TSC
static inline uint64_t clock_tsc_ns(void)
{
	uint64_t ticks = __rdtsc() - clk.tsc0;

	return clk.ns0 + (uint64_t)(((unsigned __int128)ticks * clk.mult) >> 32);
}

/* cpuid 0x80000007 EDX bit 8: the TSC rate is constant in every state. */
static int clock_tsc_invariant(void)
{
	unsigned int eax, ebx, ecx, edx;

	if (!__get_cpuid(0x80000007, &eax, &ebx, &ecx, &edx))
		return 0;
	return !!(edx & (1u << 8));
}

/*
 * One (tsc, monotonic) pair: the TSC read between two CLOCK_MONOTONIC
 * reads, taken from the attempt with the narrowest bracket so that an
 * interrupt or preemption during one attempt does not skew the pair.
 */
static void clock_pair(uint64_t *tsc, uint64_t *ns)
{
	uint64_t best = UINT64_MAX, a, b, t;
	int i;

	for (i = 0; i < CLOCK_CALIB_TRIES; i++) {
		a = clock_mono_ns();
		t = __rdtsc();
		b = clock_mono_ns();
		if (b - a < best) {
			best = b - a;
			*tsc = t;
			*ns = a + (b - a) / 2;
		}
	}
}

/* ns per tick in 32.32 fixed point for a rate of hz ticks per second. */
static uint64_t clock_mult_of_hz(uint64_t hz)
{
	return (uint64_t)(((unsigned __int128)CLOCK_NS_PER_S << 32) / hz);
}

/*
 * Measures the TSC rate against CLOCK_MONOTONIC; with a nominal rate
 * (hint_hz), a measurement that fails or is more than 5 % off it gives way
 * to the nominal rate.
 */
static int clock_tsc_calibrate(uint64_t hint_hz)
{
	struct timespec nap = { 0, CLOCK_CALIB_NS };
	uint64_t t0, n0, t1, n1, mult = 0, hint;

	clock_pair(&t0, &n0);
	while (nanosleep(&nap, &nap) && errno == EINTR)
		;
	clock_pair(&t1, &n1);
	if (t1 > t0 && n1 > n0)
		mult = (uint64_t)((((unsigned __int128)(n1 - n0)) << 32) /
				  (t1 - t0));
	if (hint_hz) {
		hint = clock_mult_of_hz(hint_hz);
		if (mult < hint - hint / CLOCK_HINT_TOLERANCE ||
		    mult > hint + hint / CLOCK_HINT_TOLERANCE)
			mult = hint;
	}
	if (!mult)
		return -EIO;
	clk.tsc0 = t0;
	clk.ns0 = n0;
	clk.mult = mult;
	return 0;
}
#endif

/* Chooses the source named by LOGGP_CLOCK, or the best available one. */
static int clock_pick(int *want_tsc)
{
	const char *env = getenv("LOGGP_CLOCK");

	if (!env) {
#if CLOCK_HAVE_TSC
		*want_tsc = clock_tsc_invariant();
#else
		*want_tsc = 0;
#endif
		return 0;
	}
	if (!strcmp(env, "monotonic")) {
		*want_tsc = 0;
		return 0;
	}
	/* Forcing the TSC trusts the user over a hidden cpuid bit (VMs). */
	if (!strcmp(env, "tsc") && CLOCK_HAVE_TSC) {
		*want_tsc = 1;
		return 0;
	}
	*want_tsc = 0;
	return -EINVAL;
}

static void clock_measure_cost(void)
{
	uint64_t best = UINT64_MAX, start, spent;
	int b, i;

	for (b = 0; b < CLOCK_COST_BATCHES; b++) {
		start = lgp_now_ns();
		for (i = 0; i < CLOCK_COST_READS; i++)
			(void)lgp_now_ns();
		spent = lgp_now_ns() - start;
		if (spent < best)
			best = spent;
	}
	clk.read_cost_ns = (best + CLOCK_COST_READS - 1) / CLOCK_COST_READS;
}

static void clock_setup(void)
{
	int want_tsc = 1;

	clk.hinted = !!clk.hint_hz;
	if (!clk.hinted)
		clk.init_rc = clock_pick(&want_tsc);
	clk.source = LGP_CLOCK_MONOTONIC;
#if CLOCK_HAVE_TSC
	if (want_tsc && !clock_tsc_calibrate(clk.hint_hz))
		clk.source = LGP_CLOCK_TSC;
#endif
	/* lgp_now_ns() is usable from here on; the cost read uses it. */
	__atomic_store_n(&clk.ready, 1, __ATOMIC_RELEASE);
	clock_measure_cost();
}

int lgp_clock_init(void)
{
	pthread_once(&clock_once, clock_setup);
	return clk.init_rc;
}

int lgp_clock_init_tsc(uint64_t tsc_hz)
{
	if (!tsc_hz)
		return -EINVAL;
	if (__atomic_load_n(&clk.ready, __ATOMIC_ACQUIRE))
		return -EALREADY;
	clk.hint_hz = tsc_hz;
	pthread_once(&clock_once, clock_setup);
	if (!clk.hinted)
		return -EALREADY;
	return clk.source == LGP_CLOCK_TSC ? 0 : -ENOTSUP;
}

enum lgp_clock_source lgp_clock_source(void)
{
	lgp_clock_init();
	return clk.source;
}

uint64_t lgp_now_ns(void)
{
	if (__builtin_expect(!__atomic_load_n(&clk.ready, __ATOMIC_ACQUIRE), 0))
		lgp_clock_init();
#if CLOCK_HAVE_TSC
	if (clk.source == LGP_CLOCK_TSC)
		return clock_tsc_ns();
#endif
	return clock_mono_ns();
}

void lgp_spin_until(uint64_t deadline_ns)
{
	while (lgp_now_ns() < deadline_ns)
		clock_relax();
}

void lgp_spin_ns(uint64_t ns)
{
	uint64_t now, deadline;

	if (!ns)
		return;
	now = lgp_now_ns();
	deadline = now + ns < now ? UINT64_MAX : now + ns;
	lgp_spin_until(deadline);
}

uint64_t lgp_clock_read_cost_ns(void)
{
	lgp_clock_init();
	return clk.read_cost_ns;
}

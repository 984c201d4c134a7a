/* SPDX-License-Identifier: MIT */
/* Unit test of noise_floor: the lateness a host's stalls alone cause. */
#include <stdio.h>

#include "noise_floor.h"

static int failures;

#define CHECK_EQ(a, b)							\
	do {								\
		unsigned long long x_ = (a), y_ = (b);			\
		if (x_ != y_) {						\
			fprintf(stderr, "%s:%d: %s = %llu, want %llu\n",	\
				__FILE__, __LINE__, #a, x_, y_);	\
			failures++;					\
		}							\
	} while (0)

#define SPAN 1000000ULL	/* 1 ms: at q = 0.99, 10 us of residual stall may pass */

static void test_quiet_host(void)
{
	uint64_t few[] = { 5000, 4000 };

	CHECK_EQ(noise_floor_ns(NULL, 0, SPAN, 0.99), 0);
	/* 9 us of stalls in 1 ms: a random instant is late by more than 0 only 0.9 % */
	CHECK_EQ(noise_floor_ns(few, 2, SPAN, 0.99), 0);
	CHECK_EQ(noise_stalled_ns(few, 2), 9000);
}

static void test_one_long_stall(void)
{
	uint64_t one[] = { 20000 };
	uint64_t two[] = { 10000, 30000 };

	/* P(late > y) = (20000 - y) / SPAN = 1 % at y = 10 us */
	CHECK_EQ(noise_floor_ns(one, 1, SPAN, 0.99), 10000);
	/* the shorter stall is below the answer, so only the longer counts */
	CHECK_EQ(noise_floor_ns(two, 2, SPAN, 0.99), 20000);
	CHECK_EQ(two[0], 30000);	/* sorted in place, longest first */
}

static void test_stalls_add_up(void)
{
	uint64_t a[] = { 11000, 12000 };
	uint64_t b[] = { 12000, 11000 };

	/* (12000 - y) + (11000 - y) = 10000 at y = 6.5 us, in any order */
	CHECK_EQ(noise_floor_ns(a, 2, SPAN, 0.99), 6500);
	CHECK_EQ(noise_floor_ns(b, 2, SPAN, 0.99), 6500);
	/* a lower quantile allows more: 50 % of 1 ms is more than both */
	CHECK_EQ(noise_floor_ns(b, 2, SPAN, 0.5), 0);
}

int main(void)
{
	test_quiet_host();
	test_one_long_stall();
	test_stalls_add_up();
	if (failures)
		fprintf(stderr, "%d check(s) failed\n", failures);
	return failures ? 1 : 0;
}

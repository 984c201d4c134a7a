/* SPDX-License-Identifier: MIT */
/*
 * Unit test of pacer.h: n*G rounding and saturation, g vs n*G, queuing,
 * the token bucket of a burst, femtosecond state, live knob changes.
 */
#include "check.h"
#include "lgp/knob.h"
#include "lgp/pacer.h"

static void test_bulk_ns(void)
{
	CHECK_EQ_U64(lgp_bulk_ns(0, 1000), 0);
	CHECK_EQ_U64(lgp_bulk_ns(1000000, 0), 0);
	CHECK_EQ_U64(lgp_bulk_ns(1000000, 1000), 1000);	/* 1 ns/B */
	CHECK_EQ_U64(lgp_bulk_ns(80000, 1000), 80);		/* 0.08 ns/B */
	CHECK_EQ_U64(lgp_bulk_ns(500000, 1), 1);		/* 0.5 rounds up */
	CHECK_EQ_U64(lgp_bulk_ns(499999, 1), 0);
	CHECK_EQ_U64(lgp_bulk_ns(1, 1), 0);
	CHECK_EQ_U64(lgp_bulk_ns(1, 1000000), 1);
	/* 50 MB/s = 20 ns/B: 64 MiB take 1.342 s */
	CHECK_EQ_U64(lgp_bulk_ns(20000000, 64ULL << 20), 1342177280ULL);
	/* no wrap-around: products above 2^64 fs stay exact in 128 bits */
	CHECK_EQ_U64(lgp_bulk_ns(1000000, UINT64_MAX), UINT64_MAX);
	CHECK_EQ_U64(lgp_bulk_ns(1ULL << 40, 1ULL << 40), 1208925819614629175ULL);
	CHECK_EQ_U64(lgp_bulk_ns(UINT64_MAX, UINT64_MAX), UINT64_MAX);
	CHECK_EQ_U64(lgp_bulk_ns(UINT64_MAX, 1), UINT64_MAX / LGP_FS_PER_NS + 1);
}

static void test_zero(void)
{
	struct lgp_pacer p;
	uint64_t start = 1, left;

	lgp_pacer_init(&p, 0, 0);
	left = lgp_pacer_inject(&p, 100, 4096, &start);
	CHECK_EQ_U64(start, 100);
	CHECK_EQ_U64(left, 100);
	left = lgp_pacer_inject(&p, 100, 4096, &start);
	CHECK_EQ_U64(start, 100);
	CHECK_EQ_U64(left, 100);
	CHECK_EQ_U64(lgp_pacer_inject(&p, 150, 1, NULL), 150);
}

/* g dominates: small messages leave one per g. */
static void test_gap_dominates(void)
{
	struct lgp_pacer p;
	uint64_t start, left;
	int i;

	lgp_pacer_init(&p, 1000, 1000000);	/* g = 1 us, G = 1 ns/B */
	left = lgp_pacer_inject(&p, 0, 10, &start);
	CHECK_EQ_U64(start, 0);
	CHECK_EQ_U64(left, 10);
	CHECK_EQ_U64(lgp_pacer_free_ns(&p), 1000);
	/* ready before the port is free: waits for it */
	left = lgp_pacer_inject(&p, 5, 10, &start);
	CHECK_EQ_U64(start, 1000);
	CHECK_EQ_U64(left, 1010);
	CHECK_EQ_U64(lgp_pacer_free_ns(&p), 2000);
	/* ready after an idle spell: leaves at once */
	left = lgp_pacer_inject(&p, 5000, 10, &start);
	CHECK_EQ_U64(start, 5000);
	CHECK_EQ_U64(left, 5010);

	/* back to back: message i starts at i * g */
	lgp_pacer_init(&p, 1000, 1000000);
	for (i = 0; i < 100; i++) {
		left = lgp_pacer_inject(&p, 0, 10, &start);
		CHECK_EQ_U64(start, (uint64_t)i * 1000);
		CHECK_EQ_U64(left, (uint64_t)i * 1000 + 10);
	}
}

/* n*G dominates: large messages leave one per n*G. */
static void test_bulk_dominates(void)
{
	struct lgp_pacer p;
	uint64_t start, left;
	int i;

	lgp_pacer_init(&p, 100, 1000000);	/* g = 100 ns, G = 1 ns/B */
	for (i = 0; i < 100; i++) {
		left = lgp_pacer_inject(&p, 0, 1000, &start);
		CHECK_EQ_U64(start, (uint64_t)i * 1000);
		CHECK_EQ_U64(left, (uint64_t)(i + 1) * 1000);
	}
	/* a small message after a large one waits out the large one's n*G */
	lgp_pacer_init(&p, 100, 1000000);
	lgp_pacer_inject(&p, 0, 1000, NULL);
	left = lgp_pacer_inject(&p, 10, 1, &start);
	CHECK_EQ_U64(start, 1000);
	CHECK_EQ_U64(left, 1001);
	CHECK_EQ_U64(lgp_pacer_free_ns(&p), 1100);
	/* mixed: equal g and n*G agree */
	lgp_pacer_init(&p, 500, 1000000);
	lgp_pacer_inject(&p, 0, 500, NULL);
	CHECK_EQ_U64(lgp_pacer_free_ns(&p), 500);
}

static void test_saturation(void)
{
	struct lgp_pacer p;
	uint64_t start, left;

	lgp_pacer_init(&p, UINT64_MAX, 0);
	left = lgp_pacer_inject(&p, 10, 1, &start);
	CHECK_EQ_U64(start, 10);
	CHECK_EQ_U64(left, 10);
	CHECK_EQ_U64(lgp_pacer_free_ns(&p), UINT64_MAX);
	left = lgp_pacer_inject(&p, 20, 1, &start);
	CHECK_EQ_U64(start, UINT64_MAX);
	CHECK_EQ_U64(left, UINT64_MAX);

	lgp_pacer_init(&p, 0, UINT64_MAX);
	left = lgp_pacer_inject(&p, 1000, UINT64_MAX, &start);
	CHECK_EQ_U64(start, 1000);
	CHECK_EQ_U64(left, UINT64_MAX);
	CHECK_EQ_U64(lgp_pacer_free_ns(&p), UINT64_MAX);

	lgp_pacer_init(&p, 1000, 1000000);
	left = lgp_pacer_inject(&p, UINT64_MAX - 10, 100, &start);
	CHECK_EQ_U64(start, UINT64_MAX - 10);
	CHECK_EQ_U64(left, UINT64_MAX);
	CHECK_EQ_U64(lgp_pacer_free_ns(&p), UINT64_MAX);
}

/* A burst of B bytes: an idle port lets B bytes start at once. */
static void test_burst(void)
{
	struct lgp_pacer p;
	uint64_t start, t;
	int i;

	lgp_pacer_init(&p, 0, 0);
	lgp_pacer_set(&p, 0, 1000000, 3000);	/* 1 ns/B, burst 3000 B */
	CHECK_EQ_U64(lgp_pacer_free_ns(&p), 0);
	CHECK_EQ_U64(lgp_pacer_start(&p, 0, 1000), 0);
	CHECK_EQ_U64(lgp_pacer_start(&p, 0, 1000), 0);
	CHECK_EQ_U64(lgp_pacer_start(&p, 0, 1000), 0);
	CHECK_EQ_U64(lgp_pacer_start(&p, 0, 1000), 1000);
	CHECK_EQ_U64(lgp_pacer_start(&p, 0, 1000), 2000);
	/* after 10 us idle the bucket is full again */
	CHECK_EQ_U64(lgp_pacer_start(&p, 12000, 3000), 12000);
	CHECK_EQ_U64(lgp_pacer_start(&p, 12000, 1), 12001);
	/* inject reports when the message has left, n*G after its start */
	CHECK_EQ_U64(lgp_pacer_inject(&p, 12000, 10, &start), 12021);
	CHECK_EQ_U64(start, 12011);

	/* a message bigger than the burst still passes, at the rate */
	lgp_pacer_init(&p, 0, 0);
	lgp_pacer_set(&p, 0, 1000000, 1000);
	CHECK_EQ_U64(lgp_pacer_start(&p, 0, 1500), 0);
	CHECK_EQ_U64(lgp_pacer_start(&p, 0, 1500), 1500);

	/* 80 ns/B, 64 KiB burst: frames back to back take (bytes - burst) * G */
	lgp_pacer_init(&p, 0, 0);
	lgp_pacer_set(&p, 0, 80000000, 65536);
	for (i = 0, t = 0; i < 20000; i++)
		t = lgp_pacer_start(&p, t, 1514);
	CHECK_EQ_U64(t, (20000ULL * 1514 - 65536) * 80);
}

/* Fractional ns per byte accumulate in femtoseconds, without drift. */
static void test_fractional(void)
{
	struct lgp_pacer p;
	uint64_t start = 0;
	int i;

	lgp_pacer_init(&p, 0, 80000);		/* 0.08 ns/B */
	for (i = 0; i < 1000; i++)
		start = lgp_pacer_start(&p, 0, 1000);
	CHECK_EQ_U64(start, 999ULL * 80);
	/* 0.5 ns per message: starts are rounded up, never early */
	lgp_pacer_init(&p, 0, 500000);
	for (i = 0; i < 10; i++)
		CHECK_EQ_U64(lgp_pacer_start(&p, 0, 1), ((uint64_t)i + 1) / 2);
	CHECK_EQ_U64(lgp_pacer_free_ns(&p), 5);
}

/* New knobs apply to the next message; the port's state is kept. */
static void test_set(void)
{
	struct lgp_pacer p;

	lgp_pacer_init(&p, 1000, 0);
	CHECK_EQ_U64(lgp_pacer_start(&p, 0, 10), 0);
	lgp_pacer_set(&p, 5000, 0, 0);
	CHECK_EQ_U64(lgp_pacer_free_ns(&p), 5000);
	CHECK_EQ_U64(lgp_pacer_start(&p, 0, 10), 5000);
	lgp_pacer_set(&p, 0, 0, 0);
	CHECK_EQ_U64(lgp_pacer_start(&p, 100, 10), 100);
}

int main(void)
{
	test_bulk_ns();
	test_zero();
	test_gap_dominates();
	test_bulk_dominates();
	test_saturation();
	test_burst();
	test_fractional();
	test_set();
	return check_done("test_pacer");
}

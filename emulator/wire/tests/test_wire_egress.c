/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the egress shaping: token bucket, gap, latency, jitter
 * with and without reordering, delays drawn from a distribution (their
 * shape, order and histogram), queue limits, loss, live knob changes and a
 * network's per-pair delays.
 * The delay line's own order is lgp_core's (emulator/core/tests).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "wire_egress.h"

#define PKT(i) ((void *)(uintptr_t)((i) + 1))

static struct wire_shape shape_plain(void)
{
	struct wire_shape s;

	wire_shape_default(&s);
	return s;
}

static uint64_t admit(struct wire_egress *e, const struct wire_shape *s,
		      uint64_t t, uint32_t len)
{
	uint64_t r = UINT64_MAX;

	CHECK_EQ_INT(wire_egress_admit(e, s, 0, NULL, t, PKT(0), len, &r), WIRE_ADMIT);
	return r;
}

static void drain(struct wire_egress *e)
{
	struct lgp_dq_slot ent;

	while (!lgp_dq_pop(&e->line, &ent))
		;
}

static void test_token_bucket(void)
{
	struct wire_shape s = shape_plain();
	struct wire_egress e;
	uint64_t r = 0, t;
	unsigned int i;

	/* 1 ns/B, burst 3000 B: an idle port lets exactly 3000 B through */
	s.bulk_gap_fs = 1000000;
	s.burst_bytes = 3000;
	CHECK_EQ_INT(wire_egress_init(&e, 64, 1, 1, 0), 0);
	CHECK_EQ_U64(admit(&e, &s, 0, 1000), 0);
	CHECK_EQ_U64(admit(&e, &s, 0, 1000), 0);
	CHECK_EQ_U64(admit(&e, &s, 0, 1000), 0);
	CHECK_EQ_U64(admit(&e, &s, 0, 1000), 1000);
	CHECK_EQ_U64(admit(&e, &s, 0, 1000), 2000);
	/* after 10 us idle the bucket is full again */
	CHECK_EQ_U64(admit(&e, &s, 12000, 3000), 12000);
	CHECK_EQ_U64(admit(&e, &s, 12000, 1), 12001);
	drain(&e);
	wire_egress_fini(&e);

	/* a frame bigger than the burst still passes, at the rate */
	s.burst_bytes = 0;
	CHECK_EQ_INT(wire_egress_init(&e, 64, 1, 1, 0), 0);
	CHECK_EQ_U64(admit(&e, &s, 0, 1500), 0);
	CHECK_EQ_U64(admit(&e, &s, 0, 1500), 1500);
	CHECK_EQ_U64(admit(&e, &s, 0, 1500), 3000);
	drain(&e);
	wire_egress_fini(&e);

	/* long run: 100 Mbit/s = 80 ns/B; 20000 frames of 1514 B sent
	 * back-to-back take (bytes - burst) * 80 ns, to the nanosecond */
	s.bulk_gap_fs = 80000000;
	s.burst_bytes = 65536;
	s.queue_pkts = 8;
	CHECK_EQ_INT(wire_egress_init(&e, 8, 1, 1, 0), 0);
	for (i = 0, t = 0; i < 20000; i++) {
		r = admit(&e, &s, t, 1514);
		drain(&e);
		if (r > t)
			t = r;	/* the sender is always ready */
	}
	CHECK_EQ_U64(r, (20000ULL * 1514 - 65536) * 80);
	wire_egress_fini(&e);

	/* fractional ns per byte (0.08 ns/B = 100 Gbit/s) do not drift */
	s.bulk_gap_fs = 80000;
	s.burst_bytes = 0;
	s.queue_pkts = 8192;
	CHECK_EQ_INT(wire_egress_init(&e, 8192, 1, 1, 0), 0);
	for (i = 0; i < 1000; i++)
		r = admit(&e, &s, 0, 1000);
	CHECK_EQ_U64(r, 999ULL * 80);	/* 999 frames of 80 ns before it */
	drain(&e);
	wire_egress_fini(&e);
}

static void test_gap_latency(void)
{
	struct wire_shape s = shape_plain();
	struct wire_egress e;

	s.gap_ns = 1000;
	s.latency_ns = 50000;
	CHECK_EQ_INT(wire_egress_init(&e, 64, 1, 1, 0), 0);
	CHECK_EQ_U64(admit(&e, &s, 0, 64), 50000);
	CHECK_EQ_U64(admit(&e, &s, 0, 64), 51000);
	CHECK_EQ_U64(admit(&e, &s, 10, 64), 52000);
	CHECK_EQ_U64(admit(&e, &s, 100000, 64), 150000);
	drain(&e);
	wire_egress_fini(&e);
}

/* Absurd knobs hold packets (release saturates), never wrap to "now". */
static void test_saturation(void)
{
	struct wire_shape s = shape_plain();
	struct wire_egress e;
	int i;

	s.latency_ns = UINT64_MAX - 10;
	CHECK_EQ_INT(wire_egress_init(&e, 64, 1, 1, 0), 0);
	CHECK_EQ_U64(admit(&e, &s, 1000, 64), UINT64_MAX);
	drain(&e);
	wire_egress_fini(&e);

	/* with jitter too, every draw; reorder on, so none is held by another */
	s.jitter_ns = 1000;
	CHECK_EQ_INT(wire_egress_init(&e, 64, 1, 1, 1), 0);
	for (i = 0; i < 32; i++)
		CHECK(admit(&e, &s, 1000 + i, 64) > UINT64_MAX / 2);
	drain(&e);
	wire_egress_fini(&e);

	s = shape_plain();
	s.gap_ns = UINT64_MAX - 5;
	CHECK_EQ_INT(wire_egress_init(&e, 64, 1, 1, 0), 0);
	CHECK_EQ_U64(admit(&e, &s, 1000, 64), 1000);
	CHECK_EQ_U64(admit(&e, &s, 1001, 64), UINT64_MAX);
	drain(&e);
	wire_egress_fini(&e);
}

static void test_jitter(int reorder)
{
	struct wire_shape s = shape_plain();
	struct wire_egress e;
	uint64_t r, last = 0, sum = 0, lo = UINT64_MAX, hi = 0, t;
	unsigned int i, backwards = 0, n = 8000;

	s.latency_ns = 100000;
	s.jitter_ns = 50000;
	CHECK_EQ_INT(wire_egress_init(&e, n, 1, 42, reorder), 0);
	for (i = 0; i < n; i++) {
		t = (uint64_t)i * 1000;
		r = admit(&e, &s, t, 100);
		backwards += r < last;
		if (r > last)
			last = r;
		sum += r - t;
		lo = r - t < lo ? r - t : lo;
		hi = r - t > hi ? r - t : hi;
	}
	if (reorder) {
		CHECK(backwards > n / 10);
		/* the delay spans the jitter range, centred on latency */
		CHECK(lo >= 50000 && lo < 52000);
		CHECK(hi <= 150000 && hi > 148000);
		CHECK(sum / n > 97000 && sum / n < 103000);
	} else {
		CHECK_EQ_INT(backwards, 0);
		CHECK(lo >= 50000);
		/* FIFO clamping only pushes delays up, never past max */
		CHECK(hi <= 150000);
		CHECK(sum / n > 100000);
	}
	/* either way the line hands packets out in release order */
	for (i = 0, last = 0; i < n; i++) {
		struct lgp_dq_slot ent;

		CHECK_EQ_INT(lgp_dq_pop(&e.line, &ent), 0);
		CHECK(ent.release_ns >= last);
		last = ent.release_ns;
	}
	wire_egress_fini(&e);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* sup |F_n - F| of n delays against normal(mean_ns, sd_ns); sorts v. */
static double ks_normal(uint64_t *v, unsigned int n, double mean_ns,
			double sd_ns)
{
	double d = 0.0, f, lo, hi;
	unsigned int i;

	qsort(v, n, sizeof(*v), cmp_u64);
	for (i = 0; i < n; i++) {
		f = 0.5 * erfc(-((double)v[i] - mean_ns) / (sd_ns * sqrt(2.0)));
		lo = fabs(f - (double)i / n);
		hi = fabs((double)(i + 1) / n - f);
		d = fmax(d, fmax(lo, hi));
	}
	return d;
}

/*
 * Delays drawn from normal(100 us, 20 us) around the port's latency.  For
 * n = 8000 a true sample exceeds a KS distance of 0.022 with probability
 * 0.001; KS_BOUND leaves room for the table's interpolation, and the
 * wrong shapes (half the spread, the constant latency) are far above it.
 */
#define KS_BOUND 0.03

static void test_distribution(int reorder)
{
	struct wire_shape s = shape_plain();
	struct wire_stats st = { 0 };
	struct lgp_stats *hist = &st.late;
	struct wire_egress e;
	struct lgp_dist d;
	char err[256];
	uint64_t r, t, last = 0, sum = 0, *v;
	unsigned int i, k, backwards = 0, n = 8000;

	v = calloc(n, sizeof(*v));
	CHECK(v != NULL);
	CHECK_EQ_INT(lgp_dist_config(&d, "normal:20us", NULL, "3", 0, err,
				     sizeof(err)), 0);
	s.latency_ns = 100000;
	CHECK_EQ_INT(wire_egress_init(&e, n + 1, 1, 42, reorder), 0);
	wire_egress_set_dist(&e, &d, 0, &st);
	for (i = 0; i < n; i++) {
		t = (uint64_t)i * 1000;
		r = admit(&e, &s, t, 100);
		backwards += r < last;
		last = r > last ? r : last;
		v[i] = r - t;
	}
	/* every admitted packet is in the histogram, as wide as the shape */
	CHECK_EQ_U64(st.delay_latency_ns, 100000);
	CHECK_EQ_U64(hist->delay_bucket_ns,
		     (100000 + 20000 * 32767 / 8192) / (LGP_DELAY_BUCKETS - 1) + 1);
	for (k = 0; k < LGP_DELAY_BUCKETS; k++)
		sum += hist->delay_hist[k];
	CHECK_EQ_U64(sum, n);
	if (reorder) {
		/* the delays are the draws: their shape is the normal's */
		CHECK(backwards > n / 10);
		CHECK_EQ_U64(hist->delay_hist[LGP_DELAY_BUCKETS - 1], 0);
		CHECK(ks_normal(v, n, 100000, 20000) < KS_BOUND);
		CHECK(ks_normal(v, n, 100000, 10000) > 3 * KS_BOUND);
		CHECK(ks_normal(v, n, 100000, 1) > 10 * KS_BOUND);
	} else {
		/* order kept: raised draws, never a release before another's */
		CHECK_EQ_INT(backwards, 0);
		CHECK(ks_normal(v, n, 100000, 20000) > KS_BOUND);
	}
	/* another latency: the histogram starts again around it */
	s.latency_ns = 300000;
	admit(&e, &s, (uint64_t)n * 1000 + 1000000, 100);
	CHECK_EQ_U64(hist->delay_bucket_ns,
		     (300000 + 20000 * 32767 / 8192) / (LGP_DELAY_BUCKETS - 1) + 1);
	CHECK_EQ_U64(st.delay_latency_ns, 300000);
	CHECK_EQ_U64(st.delay_starts, 2);
	for (sum = 0, k = 0; k < LGP_DELAY_BUCKETS; k++)
		sum += hist->delay_hist[k];
	CHECK_EQ_U64(sum, 1);
	/* the draws stop: the latency as it is, and no histogram shown */
	drain(&e);
	wire_egress_set_dist(&e, NULL, 0, &st);
	CHECK(e.dist == NULL);
	CHECK_EQ_U64(hist->delay_bucket_ns, 0);
	CHECK_EQ_U64(admit(&e, &s, (uint64_t)n * 1000 + 5000000, 100),
		     (uint64_t)n * 1000 + 5300000);
	drain(&e);
	wire_egress_fini(&e);
	lgp_dist_fini(&d);
	free(v);
}

/* Each port draws its own stream of the seed, the same again every run. */
static void test_distribution_streams(void)
{
	struct wire_shape s = shape_plain();
	struct wire_egress a, b, c;
	struct lgp_dist d, constant;
	char err[256];
	unsigned int i, same_ab = 0, same_ac = 0;
	uint64_t ra, rb, rc;

	CHECK_EQ_INT(lgp_dist_config(&d, "pareto:10us", "0.5", "9", 0, err,
				     sizeof(err)), 0);
	CHECK_EQ_INT(lgp_dist_config(&constant, NULL, NULL, NULL, 0, err,
				     sizeof(err)), 0);
	s.latency_ns = 50000;
	CHECK_EQ_INT(wire_egress_init(&a, 100, 1, 1, 1), 0);
	CHECK_EQ_INT(wire_egress_init(&b, 100, 1, 1, 1), 0);
	CHECK_EQ_INT(wire_egress_init(&c, 100, 1, 1, 1), 0);
	wire_egress_set_dist(&a, &d, 0, NULL);
	wire_egress_set_dist(&b, &d, 0, NULL);
	wire_egress_set_dist(&c, &d, 1, NULL);
	for (i = 0; i < 100; i++) {
		ra = admit(&a, &s, 0, 100);
		rb = admit(&b, &s, 0, 100);
		rc = admit(&c, &s, 0, 100);
		same_ab += ra == rb;
		same_ac += ra == rc;
	}
	CHECK_EQ_INT(same_ab, 100);
	CHECK(same_ac < 10);
	drain(&a);
	drain(&c);
	/* a constant distribution draws nothing: the latency as it is */
	wire_egress_set_dist(&c, &constant, 0, NULL);
	CHECK_EQ_U64(admit(&c, &s, 0, 100), 50000);
	drain(&b);
	drain(&c);
	wire_egress_fini(&a);
	wire_egress_fini(&b);
	wire_egress_fini(&c);
	lgp_dist_fini(&d);
}

static void test_queue_limits(void)
{
	struct wire_shape s = shape_plain();
	struct lgp_dq_slot ent;
	struct wire_egress e;
	unsigned int i;

	s.latency_ns = 1000000;
	s.queue_pkts = 5;
	CHECK_EQ_INT(wire_egress_init(&e, 16, 1, 1, 0), 0);
	for (i = 0; i < 5; i++)
		admit(&e, &s, i, 100);
	CHECK_EQ_INT(wire_egress_admit(&e, &s, 0, NULL, 9, PKT(9), 100, NULL),
		     WIRE_DROP_QUEUE);
	CHECK_EQ_INT(lgp_dq_pop(&e.line, &ent), 0);
	admit(&e, &s, 10, 100);
	drain(&e);

	s.queue_pkts = 100;
	s.queue_bytes = 3000;
	for (i = 0; i < 3; i++)
		admit(&e, &s, 20, 1000);
	CHECK_EQ_INT(wire_egress_admit(&e, &s, 0, NULL, 21, PKT(1), 1000, NULL),
		     WIRE_DROP_QUEUE);
	CHECK_EQ_INT(wire_egress_admit(&e, &s, 0, NULL, 21, PKT(1), 1, NULL),
		     WIRE_DROP_QUEUE);
	drain(&e);

	/* the line's capacity caps a queue_pkts set above it */
	s.queue_pkts = 1000;
	s.queue_bytes = 1 << 30;
	for (i = 0; i < 16; i++)
		admit(&e, &s, 30, 64);
	CHECK_EQ_INT(wire_egress_admit(&e, &s, 0, NULL, 31, PKT(1), 64, NULL),
		     WIRE_DROP_QUEUE);
	drain(&e);
	wire_egress_fini(&e);
}

static void test_loss(void)
{
	struct wire_shape s = shape_plain();
	struct wire_egress e;
	unsigned int i, lost = 0, n = 100000;

	s.loss = 0.25;
	CHECK_EQ_INT(wire_egress_init(&e, 4, 1, 7, 0), 0);
	for (i = 0; i < n; i++) {
		enum wire_verdict v = wire_egress_admit(&e, &s, 0, NULL, i, PKT(i), 64,
							NULL);
		lost += v == WIRE_DROP_LOSS;
		drain(&e);
	}
	CHECK(lost > n * 23 / 100 && lost < n * 27 / 100);
	s.loss = 1.0;
	CHECK_EQ_INT(wire_egress_admit(&e, &s, 0, NULL, 0, PKT(0), 64, NULL),
		     WIRE_DROP_LOSS);
	s.loss = 0.0;
	for (i = 0; i < 1000; i++) {
		CHECK_EQ_INT(wire_egress_admit(&e, &s, 0, NULL, i, PKT(i), 64, NULL),
			     WIRE_ADMIT);
		drain(&e);
	}
	wire_egress_fini(&e);
}

/* Lowering latency mid-stream neither reorders nor moves old packets. */
static void test_live_change(void)
{
	struct wire_shape s = shape_plain();
	struct lgp_dq_slot ent;
	struct wire_egress e;
	uint64_t old[10], r, last = 0;
	unsigned int i;

	s.latency_ns = 5000000;
	CHECK_EQ_INT(wire_egress_init(&e, 64, 1, 1, 0), 0);
	for (i = 0; i < 10; i++)
		old[i] = admit(&e, &s, i * 1000, 100);
	s.latency_ns = 0;
	r = admit(&e, &s, 20000, 100);
	CHECK_EQ_U64(r, old[9]);	/* waits behind the old ones */
	r = admit(&e, &s, old[9] + 1, 100);
	CHECK_EQ_U64(r, old[9] + 1);	/* then new latency applies */
	for (i = 0; i < 12; i++) {
		CHECK_EQ_INT(lgp_dq_pop(&e.line, &ent), 0);
		if (i < 10)
			CHECK_EQ_U64(ent.release_ns, old[i]);
		CHECK(ent.release_ns >= last);
		last = ent.release_ns;
	}
	wire_egress_fini(&e);
}

/*
 * A network's pairs: source 1 is 50 us away, source 0 near; source 2's
 * path is 1 ns/B.  Each source's packets keep their order, a near one
 * passes a far one, the path paces only its own source, and what the
 * pairs added is counted per source.
 */
static void test_pairs(void)
{
	struct wire_shape s = shape_plain();
	const struct wire_pair far = { 50000, 0, 0 }, slow = { 0, 0, 1000000 };
	uint64_t counts[6] = { 0 };
	struct lgp_dq_slot ent;
	struct wire_egress e;
	uint64_t r;

	s.latency_ns = 1000;
	CHECK_EQ_INT(wire_egress_init(&e, 64, 3, 1, 0), 0);
	e.pair_pkts = counts;
	e.pair_latency_ns = counts + 3;
	CHECK_EQ_INT(wire_egress_admit(&e, &s, 1, &far, 0, PKT(1), 100, &r),
		     WIRE_ADMIT);
	CHECK_EQ_U64(r, 51000);
	CHECK_EQ_INT(wire_egress_admit(&e, &s, 0, NULL, 10, PKT(0), 100, &r),
		     WIRE_ADMIT);
	CHECK_EQ_U64(r, 1010);		/* near: not behind the far one */
	CHECK_EQ_INT(wire_egress_admit(&e, &s, 1, NULL, 20, PKT(1), 100, &r),
		     WIRE_ADMIT);
	CHECK_EQ_U64(r, 51000);		/* its own source's order holds */
	CHECK_EQ_INT(wire_egress_admit(&e, &s, 2, &slow, 30, PKT(2), 1000, &r),
		     WIRE_ADMIT);
	CHECK_EQ_U64(r, 1030);
	CHECK_EQ_INT(wire_egress_admit(&e, &s, 2, &slow, 40, PKT(2), 1000, &r),
		     WIRE_ADMIT);
	CHECK_EQ_U64(r, 2030);		/* paced by its path: 1000 B at 1 ns/B */
	CHECK_EQ_INT(wire_egress_admit(&e, &s, 0, NULL, 50, PKT(0), 1000, &r),
		     WIRE_ADMIT);
	CHECK_EQ_U64(r, 1050);		/* another source: the port alone */
	CHECK_EQ_U64(counts[1], 1);		/* pkts from 1 with its pair */
	CHECK_EQ_U64(counts[2], 2);
	CHECK_EQ_U64(counts[0], 0);		/* no pair given */
	CHECK_EQ_U64(counts[4], 50000);
	CHECK_EQ_U64(counts[5], 0);
	CHECK_EQ_INT(lgp_dq_pop(&e.line, &ent), 0);
	CHECK_EQ_U64(ent.release_ns, 1010);
	drain(&e);
	wire_egress_fini(&e);
	CHECK_EQ_INT(wire_egress_init(&e, 64, 0, 1, 0), -EINVAL);
}

int main(void)
{
	test_token_bucket();
	test_gap_latency();
	test_saturation();
	test_jitter(0);
	test_jitter(1);
	test_distribution(0);
	test_distribution(1);
	test_distribution_streams();
	test_queue_limits();
	test_loss();
	test_live_change();
	test_pairs();
	return check_done("test_wire_egress");
}

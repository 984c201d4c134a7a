/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the egress shaping: token bucket, gap, latency, jitter
 * with and without reordering, queue limits, loss and live knob changes.
 * The delay line's own order is lgp_core's (emulator/core/tests).
 */
#include <stdint.h>

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

	CHECK_EQ_INT(wire_egress_admit(e, s, t, PKT(0), len, &r), WIRE_ADMIT);
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
	CHECK_EQ_INT(wire_egress_init(&e, 64, 1, 0), 0);
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
	CHECK_EQ_INT(wire_egress_init(&e, 64, 1, 0), 0);
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
	CHECK_EQ_INT(wire_egress_init(&e, 8, 1, 0), 0);
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
	CHECK_EQ_INT(wire_egress_init(&e, 8192, 1, 0), 0);
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
	CHECK_EQ_INT(wire_egress_init(&e, 64, 1, 0), 0);
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
	CHECK_EQ_INT(wire_egress_init(&e, 64, 1, 0), 0);
	CHECK_EQ_U64(admit(&e, &s, 1000, 64), UINT64_MAX);
	drain(&e);
	wire_egress_fini(&e);

	/* with jitter too, every draw; reorder on, so none is held by another */
	s.jitter_ns = 1000;
	CHECK_EQ_INT(wire_egress_init(&e, 64, 1, 1), 0);
	for (i = 0; i < 32; i++)
		CHECK(admit(&e, &s, 1000 + i, 64) > UINT64_MAX / 2);
	drain(&e);
	wire_egress_fini(&e);

	s = shape_plain();
	s.gap_ns = UINT64_MAX - 5;
	CHECK_EQ_INT(wire_egress_init(&e, 64, 1, 0), 0);
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
	CHECK_EQ_INT(wire_egress_init(&e, n, 42, reorder), 0);
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

static void test_queue_limits(void)
{
	struct wire_shape s = shape_plain();
	struct lgp_dq_slot ent;
	struct wire_egress e;
	unsigned int i;

	s.latency_ns = 1000000;
	s.queue_pkts = 5;
	CHECK_EQ_INT(wire_egress_init(&e, 16, 1, 0), 0);
	for (i = 0; i < 5; i++)
		admit(&e, &s, i, 100);
	CHECK_EQ_INT(wire_egress_admit(&e, &s, 9, PKT(9), 100, NULL),
		     WIRE_DROP_QUEUE);
	CHECK_EQ_INT(lgp_dq_pop(&e.line, &ent), 0);
	admit(&e, &s, 10, 100);
	drain(&e);

	s.queue_pkts = 100;
	s.queue_bytes = 3000;
	for (i = 0; i < 3; i++)
		admit(&e, &s, 20, 1000);
	CHECK_EQ_INT(wire_egress_admit(&e, &s, 21, PKT(1), 1000, NULL),
		     WIRE_DROP_QUEUE);
	CHECK_EQ_INT(wire_egress_admit(&e, &s, 21, PKT(1), 1, NULL),
		     WIRE_DROP_QUEUE);
	drain(&e);

	/* the line's capacity caps a queue_pkts set above it */
	s.queue_pkts = 1000;
	s.queue_bytes = 1 << 30;
	for (i = 0; i < 16; i++)
		admit(&e, &s, 30, 64);
	CHECK_EQ_INT(wire_egress_admit(&e, &s, 31, PKT(1), 64, NULL),
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
	CHECK_EQ_INT(wire_egress_init(&e, 4, 7, 0), 0);
	for (i = 0; i < n; i++) {
		enum wire_verdict v = wire_egress_admit(&e, &s, i, PKT(i), 64,
							NULL);
		lost += v == WIRE_DROP_LOSS;
		drain(&e);
	}
	CHECK(lost > n * 23 / 100 && lost < n * 27 / 100);
	s.loss = 1.0;
	CHECK_EQ_INT(wire_egress_admit(&e, &s, 0, PKT(0), 64, NULL),
		     WIRE_DROP_LOSS);
	s.loss = 0.0;
	for (i = 0; i < 1000; i++) {
		CHECK_EQ_INT(wire_egress_admit(&e, &s, i, PKT(i), 64, NULL),
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
	CHECK_EQ_INT(wire_egress_init(&e, 64, 1, 0), 0);
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

int main(void)
{
	test_token_bucket();
	test_gap_latency();
	test_saturation();
	test_jitter(0);
	test_jitter(1);
	test_queue_limits();
	test_loss();
	test_live_change();
	return check_done("test_wire_egress");
}

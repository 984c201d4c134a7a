/* SPDX-License-Identifier: MIT */
/*
 * Unit test of a port's counters: what one sent packet adds, and which
 * packets count in the port's lateness (those the shaping delayed).
 */
#include "check.h"
#include "wire_stats.h"

/* A packet of len bytes that arrived at arrival_ns, due at release_ns. */
static struct lgp_dq_slot slot(uint64_t arrival_ns, uint64_t release_ns,
			       uint64_t len)
{
	return (struct lgp_dq_slot){ .release_ns = release_ns,
				     .stamp_ns = arrival_ns, .bytes = len };
}

static void tx(struct wire_stats *s, uint64_t arrival_ns, uint64_t release_ns,
	       uint64_t now_ns)
{
	struct lgp_dq_slot e = slot(arrival_ns, release_ns, 100);

	wire_stats_tx(s, &e, now_ns);
}

/* Undelayed packets (every one with all knobs at zero) leave no lateness. */
static void test_undelayed(void)
{
	struct wire_stats s = { 0 };
	unsigned int k;

	tx(&s, 1000, 1000, 1000);
	tx(&s, 1000, 1000, 60000);	/* sent 59 us after arrival */
	CHECK_EQ_U64(s.tx_pkts, 2);
	CHECK_EQ_U64(s.tx_bytes, 200);
	CHECK_EQ_U64(s.delay_sum_ns, 59000);
	CHECK_EQ_U64(s.hist[0], 1);
	CHECK_EQ_U64(s.hist[2], 1);
	for (k = LGP_STAT_LATE_FIRST; k <= LGP_STAT_LATE_LAST; k++)
		CHECK_EQ_U64(lgp_stats_get(&s.late, k), 0);
	for (k = 0; k < LGP_LATE_BUCKETS; k++)
		CHECK_EQ_U64(s.late.late_hist[k], 0);
}

/* Delayed packets count once each, late by now - release time. */
static void test_delayed(void)
{
	struct wire_stats s = { 0 };

	tx(&s, 1000, 1001, 1001);		/* 1 ns delay, on time */
	tx(&s, 1000, 51000, 53500);		/* 50 us delay, 2.5 us late */
	tx(&s, 1000, 51000, 71000);		/* 20 us late */
	tx(&s, 1000, 1000, 90000);		/* undelayed: not counted */
	CHECK_EQ_U64(s.tx_pkts, 4);
	CHECK_EQ_U64(lgp_stats_get(&s.late, LGP_STAT_RELEASES), 3);
	CHECK_EQ_U64(lgp_stats_get(&s.late, LGP_STAT_LATE_NS), 22500);
	CHECK_EQ_U64(lgp_stats_get(&s.late, LGP_STAT_LATE_MAX_NS), 20000);
	CHECK_EQ_U64(lgp_stats_get(&s.late, LGP_STAT_LATE_OVER), 1);
	CHECK_EQ_U64(lgp_stats_get(&s.late, LGP_STAT_EARLY), 0);
	CHECK_EQ_U64(s.late.late_hist[0], 1);
	CHECK_EQ_U64(s.late.late_hist[2], 1);
	CHECK_EQ_U64(s.late.late_hist[5], 1);
}

/* The snapshot the control thread reads carries the lateness too. */
static void test_read(void)
{
	struct wire_stats s = { 0 }, copy;

	tx(&s, 0, 10000, 12000);
	wire_stats_read(&s, &copy);
	CHECK_EQ_U64(lgp_stats_get(&copy.late, LGP_STAT_RELEASES), 1);
	CHECK_EQ_U64(copy.late.late_hist[2], 1);
	CHECK_EQ_U64(copy.tx_pkts, 1);
}

int main(void)
{
	test_undelayed();
	test_delayed();
	test_read();
	return check_done("test_wire_stats");
}

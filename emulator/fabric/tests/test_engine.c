/* SPDX-License-Identifier: MIT */
/*
 * Unit test of the delay engine (lgp_engine.h) on a fake clock, without
 * libfabric: how o_s, g, G and L combine for a message of n bytes, when a
 * send is posted, deferred, or waited for, back-pressure, the release
 * order and its lateness, returned data, o_r, and releases while an
 * overhead is spun.  Every time is exact.
 */
#include <errno.h>

#include "check.h"
#include "lgp_engine.h"

/* The fake clock: spinning moves it to the deadline at once. */
static uint64_t fake_now;

static uint64_t fake_clock(void)
{
	return fake_now;
}

static void fake_spin_until(uint64_t deadline_ns)
{
	if (deadline_ns > fake_now)
		fake_now = deadline_ns;
}

/* An operation as the shim's requests are to the engine. */
struct op {
	int id;
	uint64_t len;
	struct lgp_eng_port *port;
};

/* What the fake provider was handed, in order; how many posts it refuses. */
static int posted[64];
static uint64_t posted_at[64];
static unsigned int nposted;
static unsigned int refuse_posts;
static uint64_t post_cost;	/* what a post takes on the fake clock */
static struct lgp_engine *reenter;

static ssize_t fake_post(void *item)
{
	struct op *op = item;

	if (reenter)
		CHECK_EQ_U64(lgp_eng_release(reenter, UINT64_MAX - 1), 0);
	if (refuse_posts) {
		refuse_posts--;
		return -EAGAIN;
	}
	posted_at[nposted % 64] = fake_now;
	posted[nposted++ % 64] = op->id;
	lgp_eng_dequeued(op->port, op->len);
	fake_now += post_cost;
	return 0;
}

/* Whether another thread holds the engine's lock, for try_release. */
static bool lock_busy;

static size_t fake_try_release(struct lgp_engine *eng, uint64_t now)
{
	return lock_busy ? 0 : lgp_eng_release(eng, now);
}

static const struct lgp_eng_ops fake_ops = {
	.now = fake_clock,
	.spin_until = fake_spin_until,
	.try_release = fake_try_release,
	.post = fake_post,
};

static struct lgp_stats stats;

/* One engine with its ports, on a fresh fake clock and counters. */
struct rig {
	struct lgp_engine eng;
	struct lgp_eng_port port[4];
	struct lgp_eng_plan plan;
};

static void setup(struct rig *r, struct lgp_params p, size_t depth)
{
	unsigned int i;

	fake_now = 0;
	nposted = 0;
	post_cost = 0;
	refuse_posts = 0;
	lock_busy = false;
	reenter = NULL;
	memset(&stats, 0, sizeof(stats));
	CHECK_EQ_INT(lgp_eng_init(&r->eng, &p, &fake_ops, &stats, depth), 0);
	for (i = 0; i < 4; i++)
		lgp_eng_port_init(&r->eng, &r->port[i]);
}

static struct lgp_eng_msg msg_of(uint64_t len)
{
	return (struct lgp_eng_msg){ .len = len, .has_tx_cq = true };
}

/* Submits op and acts on the verdict as the shim does; returns it. */
static enum lgp_eng_verdict send_op(struct rig *r, struct op *op,
				    const struct lgp_eng_msg *msg)
{
	enum lgp_eng_verdict v = lgp_eng_submit(&r->eng, op->port, msg,
						&r->plan);

	op->len = msg->len;
	if (v == LGP_ENG_POST)
		lgp_eng_posted(&r->eng, msg, &r->plan);
	else if (v == LGP_ENG_DEFER)
		CHECK_EQ_INT(lgp_eng_queue(&r->eng, op->port, msg, &r->plan, op),
			     0);
	return v;
}

/* Nothing to wait for: posted at once, with its times all "now". */
static void test_post_at_once(void)
{
	struct lgp_eng_msg msg = msg_of(4096);
	struct rig r;
	struct op op = { .id = 1, .port = &r.port[0] };

	setup(&r, (struct lgp_params){ .recv_overhead_ns = 1 }, 16);
	fake_now = 777;
	CHECK_EQ_INT(send_op(&r, &op, &msg), LGP_ENG_POST);
	CHECK_EQ_U64(r.plan.ready, 777);
	CHECK_EQ_U64(r.plan.start, 777);
	CHECK_EQ_U64(r.plan.left, 777);
	CHECK_EQ_U64(r.plan.post_at, 777);
	CHECK_EQ_U64(lgp_eng_queued(&r.eng), 0);
	CHECK_EQ_U64(lgp_eng_next_release(&r.eng), UINT64_MAX);
	CHECK_EQ_U64(lgp_stats_get(&stats, LGP_STAT_MSGS), 1);
	CHECK_EQ_U64(lgp_stats_get(&stats, LGP_STAT_BYTES), 4096);
	lgp_eng_fini(&r.eng);
}

/* o_s is spun before the port is reserved: ready = t + o_s. */
static void test_send_overhead(void)
{
	struct lgp_eng_msg msg = msg_of(10);
	struct rig r;

	setup(&r, (struct lgp_params){ .send_overhead_ns = 5000 }, 16);
	fake_now = 1000;
	lgp_eng_send_overhead(&r.eng);
	CHECK_EQ_U64(fake_now, 6000);
	CHECK_EQ_U64(lgp_stats_get(&stats, LGP_STAT_SEND_OVERHEAD_NS), 5000);
	CHECK_EQ_INT(lgp_eng_submit(&r.eng, &r.port[0], &msg, &r.plan),
		     LGP_ENG_POST);
	CHECK_EQ_U64(r.plan.ready, 6000);
	CHECK_EQ_U64(r.plan.start, 6000);
	lgp_eng_fini(&r.eng);
}

/*
 * g, G and L together: a message of n bytes starts when the port is
 * free, has left n*G later, is due L after that; its local completion
 * (plan.left) does not wait for L.
 */
static void test_gap_bulk_latency(void)
{
	struct lgp_eng_msg big = msg_of(100), small = msg_of(10);
	struct rig r;
	struct lgp_eng_port *port = &r.port[0];
	struct op a = { .id = 1, .port = port }, b = { .id = 2, .port = port };

	/* g 1 us, G 2 ns/B, L 10 us */
	setup(&r, (struct lgp_params){ .gap_ns = 1000, .bulk_gap_fs = 2000000,
				       .latency_ns = 10000 }, 16);
	CHECK_EQ_INT(send_op(&r, &a, &big), LGP_ENG_DEFER);
	CHECK_EQ_U64(r.plan.start, 0);
	CHECK_EQ_U64(r.plan.left, 200);
	CHECK_EQ_U64(r.plan.post_at, 10200);
	/* g dominates n*G: the next starts 1 us after the first */
	CHECK_EQ_INT(send_op(&r, &b, &small), LGP_ENG_DEFER);
	CHECK_EQ_U64(r.plan.start, 1000);
	CHECK_EQ_U64(r.plan.left, 1020);
	CHECK_EQ_U64(r.plan.post_at, 11020);
	CHECK_EQ_U64(port->queued_msgs, 2);
	CHECK_EQ_U64(port->queued_bytes, 110);
	CHECK_EQ_U64(lgp_eng_next_release(&r.eng), 10200);
	/* the port is free at 2 us (start + g), the last send due L later */
	CHECK_EQ_U64(lgp_eng_port_last_due(&r.eng, port), 12000);
	CHECK_EQ_U64(lgp_stats_get(&stats, LGP_STAT_GAP_NS), 1000);
	CHECK_EQ_U64(lgp_stats_get(&stats, LGP_STAT_BULK_GAP_NS), 220);
	CHECK_EQ_U64(lgp_stats_get(&stats, LGP_STAT_LATENCY_NS), 20000);
	CHECK_EQ_U64(lgp_stats_get(&stats, LGP_STAT_MAX_QUEUE_DEPTH), 2);

	/* released exactly at their times, not a nanosecond before */
	fake_now = 10199;
	CHECK_EQ_U64(lgp_eng_release(&r.eng, fake_now), 0);
	fake_now = 10200;
	CHECK_EQ_U64(lgp_eng_release(&r.eng, fake_now), 1);
	CHECK_EQ_U64(lgp_eng_next_release(&r.eng), 11020);
	fake_now = 11025;
	CHECK_EQ_U64(lgp_eng_release(&r.eng, fake_now), 1);
	CHECK_EQ_U64(nposted, 2);
	CHECK(posted[0] == 1 && posted[1] == 2);
	CHECK_EQ_U64(port->queued_msgs, 0);
	CHECK_EQ_U64(port->queued_bytes, 0);
	CHECK_EQ_U64(lgp_eng_next_release(&r.eng), UINT64_MAX);
	/* lateness: 0 and 5 ns, none early */
	CHECK_EQ_U64(lgp_stats_get(&stats, LGP_STAT_RELEASES), 2);
	CHECK_EQ_U64(lgp_stats_get(&stats, LGP_STAT_LATE_NS), 5);
	CHECK_EQ_U64(lgp_stats_get(&stats, LGP_STAT_EARLY), 0);
	lgp_eng_fini(&r.eng);
}

/*
 * A topology's latency towards a destination adds to L: a message to a
 * far peer is due later, one to a near peer sent after it on the same
 * port may go first, and the port's last due time covers the far one.
 */
static void test_pair_latency(void)
{
	struct lgp_eng_msg far = msg_of(10), near = msg_of(10);
	struct rig r;
	struct lgp_eng_port *port = &r.port[0];
	struct op a = { .id = 1, .port = port }, b = { .id = 2, .port = port };

	far.pair_latency_ns = 50000;
	setup(&r, (struct lgp_params){ .latency_ns = 1000 }, 16);
	CHECK_EQ_INT(send_op(&r, &a, &far), LGP_ENG_DEFER);
	CHECK_EQ_U64(r.plan.post_at, 51000);
	CHECK_EQ_U64(r.plan.latency, 51000);
	fake_now = 10;
	CHECK_EQ_INT(send_op(&r, &b, &near), LGP_ENG_DEFER);
	CHECK_EQ_U64(r.plan.post_at, 1010);
	CHECK_EQ_U64(lgp_eng_port_last_due(&r.eng, port), 51000);
	CHECK_EQ_U64(lgp_stats_get(&stats, LGP_STAT_LATENCY_NS), 52000);
	fake_now = 51000;
	CHECK_EQ_U64(lgp_eng_release(&r.eng, fake_now), 2);
	CHECK(posted[0] == 2 && posted[1] == 1);
	lgp_eng_fini(&r.eng);
}

/*
 * A topology's path towards a destination paces in series with the port:
 * its G sets when a message has left, a second message to it waits for
 * the path, one to another destination only for the port, and a cancel
 * gives the path back.
 */
static void test_pair_path(void)
{
	struct lgp_pacer path;
	struct lgp_eng_msg far = msg_of(100), near = msg_of(100);
	struct rig r;
	struct lgp_eng_port *port = &r.port[0];
	struct op a = { .id = 1, .port = port }, b = { .id = 2, .port = port },
		  c = { .id = 3, .port = port };

	lgp_pacer_init(&path, 0, 1000000);	/* G 1 ns/B */
	far.path = &path;
	/* the port's own G is 0.5 ns/B: the path is the narrower */
	setup(&r, (struct lgp_params){ .latency_ns = 1000, .bulk_gap_fs = 500000 }, 16);
	CHECK_EQ_INT(send_op(&r, &a, &far), LGP_ENG_DEFER);
	CHECK_EQ_U64(r.plan.start, 0);
	CHECK_EQ_U64(r.plan.left, 100);
	CHECK_EQ_U64(r.plan.paced, 50);
	CHECK_EQ_U64(r.plan.post_at, 1100);
	/* the port is free at 50, the path at 100 */
	CHECK_EQ_INT(send_op(&r, &b, &far), LGP_ENG_DEFER);
	CHECK_EQ_U64(r.plan.start, 100);
	CHECK_EQ_U64(r.plan.left, 200);
	CHECK_EQ_U64(r.plan.paced, 100);
	lgp_eng_cancel(port, &r.plan);
	CHECK_EQ_U64(lgp_pacer_free_ns(&path), 100);
	CHECK_EQ_INT(send_op(&r, &c, &near), LGP_ENG_DEFER);
	CHECK_EQ_U64(r.plan.start, 50);
	CHECK_EQ_U64(r.plan.left, 100);
	CHECK_EQ_U64(r.plan.paced, 0);
	lgp_eng_fini(&r.eng);
}

/*
 * A read is a small request that leaves at start; its n bytes come back
 * over the same port, so its data is seen at start + L + n*G + L at the
 * earliest, and L after the real completion.
 */
static void test_returned_data(void)
{
	struct lgp_eng_msg rd = msg_of(1000);
	struct rig r;
	struct op op = { .id = 1, .port = &r.port[0] };

	rd.returns_data = true;
	/* G 1 ns/B, L 10 us */
	setup(&r, (struct lgp_params){ .bulk_gap_fs = 1000000,
				       .latency_ns = 10000 }, 16);
	CHECK_EQ_INT(send_op(&r, &op, &rd), LGP_ENG_DEFER);
	CHECK_EQ_U64(r.plan.start, 0);
	CHECK_EQ_U64(r.plan.left, 1000);
	CHECK_EQ_U64(r.plan.post_at, 10000);
	CHECK_EQ_U64(r.plan.return_at, 21000);
	CHECK_EQ_U64(lgp_eng_return_time(&r.eng, r.plan.return_at, 15000), 25000);
	CHECK_EQ_U64(lgp_eng_return_time(&r.eng, r.plan.return_at, 5000), 21000);
	lgp_eng_fini(&r.eng);

	/* no L: due at once, but its data takes n*G, so it is deferred */
	setup(&r, (struct lgp_params){ .bulk_gap_fs = 1000000 }, 16);
	CHECK_EQ_INT(send_op(&r, &op, &rd), LGP_ENG_DEFER);
	CHECK_EQ_U64(r.plan.post_at, 0);
	CHECK_EQ_U64(r.plan.return_at, 1000);
	lgp_eng_fini(&r.eng);

	/* neither: posted at once */
	setup(&r, (struct lgp_params){ .send_overhead_ns = 1 }, 16);
	CHECK_EQ_INT(send_op(&r, &op, &rd), LGP_ENG_POST);
	lgp_eng_fini(&r.eng);
}

/*
 * A send that is due still queues behind its port's queued ones, and a
 * head the provider refuses (-EAGAIN) stays first: the port's order holds.
 */
static void test_order(void)
{
	struct lgp_eng_msg msg = msg_of(10);
	struct rig r;
	struct op a = { .id = 1, .port = &r.port[0] };
	struct op b = { .id = 2, .port = &r.port[0] };
	struct op c = { .id = 3, .port = &r.port[0] };
	struct op d = { .id = 4, .port = &r.port[1] };

	setup(&r, (struct lgp_params){ .gap_ns = 1000 }, 16);
	CHECK_EQ_INT(send_op(&r, &a, &msg), LGP_ENG_POST);
	CHECK_EQ_INT(send_op(&r, &b, &msg), LGP_ENG_DEFER);
	CHECK_EQ_U64(r.plan.post_at, 1000);
	/* at 5 us b is due, but the provider refuses it for now */
	fake_now = 5000;
	refuse_posts = 2;
	CHECK_EQ_INT(send_op(&r, &c, &msg), LGP_ENG_DEFER);
	CHECK_EQ_U64(r.plan.post_at, 5000);
	CHECK_EQ_U64(lgp_eng_next_release(&r.eng), 1000);
	/* another port's send is not held up by this one's queue */
	CHECK_EQ_INT(send_op(&r, &d, &msg), LGP_ENG_POST);
	CHECK_EQ_U64(lgp_eng_release(&r.eng, fake_now), 2);
	CHECK_EQ_U64(nposted, 2);
	CHECK(posted[0] == 2 && posted[1] == 3);
	lgp_eng_fini(&r.eng);
}

/*
 * Across ports operations leave by post time, and those with equal post
 * times first in first out.
 */
static void test_release_order(void)
{
	struct lgp_eng_msg msg = msg_of(1), big = msg_of(10000);
	struct op ops[10];
	struct rig r;
	unsigned int i;

	/* G 1 ns/B, L 5 us */
	setup(&r, (struct lgp_params){ .bulk_gap_fs = 1000000,
				       .latency_ns = 5000 }, 16);
	/* 10 us on the wire: due after all the others */
	ops[9] = (struct op){ .id = 9, .port = &r.port[3] };
	CHECK_EQ_INT(send_op(&r, &ops[9], &big), LGP_ENG_DEFER);
	CHECK_EQ_U64(r.plan.post_at, 15000);
	fake_now = 100;
	for (i = 0; i < 8; i++) {
		ops[i] = (struct op){ .id = (int)i, .port = &r.port[i % 3] };
		CHECK_EQ_INT(send_op(&r, &ops[i], &msg), LGP_ENG_DEFER);
	}
	CHECK_EQ_U64(lgp_eng_next_release(&r.eng), 5101);
	CHECK_EQ_U64(lgp_eng_release(&r.eng, 20000), 9);
	for (i = 0; i < 9; i++)
		CHECK_EQ_INT(posted[i], i < 8 ? (int)i : 9);
	lgp_eng_fini(&r.eng);
}

/*
 * An endpoint without a transmit CQ cannot be told when a deferred
 * payload is free again: its caller waits for the post time instead.
 */
static void test_wait_without_cq(void)
{
	struct lgp_eng_msg msg = { .len = 100 }, with_cq = msg_of(100);
	struct rig r;
	struct op a = { .id = 1, .port = &r.port[0] };
	struct op b = { .id = 2, .port = &r.port[0] };

	/* G 1 ns/B, L 20 us */
	setup(&r, (struct lgp_params){ .bulk_gap_fs = 1000000,
				       .latency_ns = 20000 }, 16);
	fake_now = 1000;
	CHECK_EQ_INT(lgp_eng_submit(&r.eng, &r.port[0], &msg, &r.plan),
		     LGP_ENG_WAIT);
	CHECK_EQ_U64(r.plan.post_at, 21100);
	CHECK_EQ_U64(fake_now, 1000);
	lgp_eng_wait(&r.eng, &r.plan);
	CHECK_EQ_U64(fake_now, 21100);
	CHECK_EQ_INT(lgp_eng_decide(&r.eng, &r.port[0], &msg, &r.plan),
		     LGP_ENG_POST);
	CHECK_EQ_U64(r.plan.now, 21100);
	lgp_eng_posted(&r.eng, &msg, &r.plan);
	/* waiting is not waiting for the port: no gap counted */
	CHECK_EQ_U64(lgp_stats_get(&stats, LGP_STAT_GAP_NS), 0);
	CHECK_EQ_U64(lgp_stats_get(&stats, LGP_STAT_BULK_GAP_NS), 100);

	/* with something queued ahead it queues behind it instead */
	CHECK_EQ_INT(send_op(&r, &a, &with_cq), LGP_ENG_DEFER);
	CHECK_EQ_INT(send_op(&r, &b, &msg), LGP_ENG_DEFER);
	lgp_eng_fini(&r.eng);
}

/* Back-pressure: each limit refuses with the port as it was. */
static void test_full(void)
{
	struct lgp_eng_msg msg = msg_of(1), huge = msg_of(LGP_EP_QUEUE_BYTES * 2);
	static struct op ops[LGP_EP_QUEUE_MSGS];
	struct rig r;
	struct lgp_eng_port *port = &r.port[0], *other = &r.port[1];
	unsigned int i;

	/* g 100 ns, L 1 ms */
	setup(&r, (struct lgp_params){ .gap_ns = 100, .latency_ns = 1000000 },
	      4096);
	for (i = 0; i < LGP_EP_QUEUE_MSGS; i++) {
		ops[i] = (struct op){ .id = (int)i, .port = port };
		CHECK_EQ_INT(send_op(&r, &ops[i], &msg), LGP_ENG_DEFER);
	}
	CHECK_EQ_U64(lgp_pacer_free_ns(&port->pacer), LGP_EP_QUEUE_MSGS * 100);
	CHECK_EQ_INT(lgp_eng_submit(&r.eng, port, &msg, &r.plan), LGP_ENG_FULL);
	CHECK_EQ_U64(lgp_stats_get(&stats, LGP_STAT_EAGAIN), 1);
	CHECK_EQ_U64(lgp_pacer_free_ns(&port->pacer), LGP_EP_QUEUE_MSGS * 100);
	CHECK_EQ_U64(lgp_stats_get(&stats, LGP_STAT_MSGS), LGP_EP_QUEUE_MSGS);

	/* bytes: one message of any size, a second beyond the limit not */
	ops[0].port = other;
	CHECK_EQ_INT(send_op(&r, &ops[0], &huge), LGP_ENG_DEFER);
	CHECK_EQ_INT(lgp_eng_submit(&r.eng, other, &msg, &r.plan), LGP_ENG_FULL);
	lgp_eng_fini(&r.eng);

	/* the engine's queue, for all ports together */
	setup(&r, (struct lgp_params){ .latency_ns = 1000 }, 2);
	ops[0].port = port;
	ops[1].port = other;
	CHECK_EQ_INT(send_op(&r, &ops[0], &msg), LGP_ENG_DEFER);
	CHECK_EQ_INT(send_op(&r, &ops[1], &msg), LGP_ENG_DEFER);
	CHECK_EQ_INT(lgp_eng_submit(&r.eng, other, &msg, &r.plan), LGP_ENG_FULL);
	CHECK_EQ_INT(lgp_eng_queue(&r.eng, other, &msg, &r.plan, &ops[2]),
		     -EAGAIN);
	CHECK_EQ_U64(other->queued_msgs, 1);
	lgp_eng_fini(&r.eng);

	/* the transmit CQ's synthesised completions */
	setup(&r, (struct lgp_params){ .latency_ns = 1000 }, 16);
	msg.tx_cq_full = true;
	CHECK_EQ_INT(lgp_eng_submit(&r.eng, port, &msg, &r.plan), LGP_ENG_FULL);
	lgp_eng_fini(&r.eng);
}

/* A send the caller could not carry out leaves the port as it was. */
static void test_cancel(void)
{
	struct lgp_eng_msg msg = msg_of(10);
	struct rig r;
	struct lgp_eng_port *port = &r.port[0];

	setup(&r, (struct lgp_params){ .gap_ns = 1000 }, 16);
	CHECK_EQ_INT(lgp_eng_submit(&r.eng, port, &msg, &r.plan), LGP_ENG_POST);
	lgp_eng_cancel(port, &r.plan);		/* the provider refused */
	CHECK_EQ_INT(lgp_eng_submit(&r.eng, port, &msg, &r.plan), LGP_ENG_POST);
	CHECK_EQ_U64(r.plan.start, 0);
	CHECK_EQ_INT(lgp_eng_submit(&r.eng, port, &msg, &r.plan), LGP_ENG_DEFER);
	lgp_eng_refuse(&r.eng, port, &r.plan);	/* no request to hold it */
	CHECK_EQ_U64(lgp_stats_get(&stats, LGP_STAT_EAGAIN), 1);
	CHECK_EQ_U64(lgp_pacer_free_ns(&port->pacer), 1000);
	lgp_eng_fini(&r.eng);
}

/*
 * A post that comes back into the engine (the provider calls the
 * application, which sends) releases nothing: the outer pass owns the
 * head.  Late releases are counted as late.
 */
static void test_release_reentry(void)
{
	struct lgp_eng_msg msg = msg_of(10);
	struct rig r;
	struct op a = { .id = 1, .port = &r.port[0] };
	struct op b = { .id = 2, .port = &r.port[0] };

	setup(&r, (struct lgp_params){ .latency_ns = 1000 }, 16);
	CHECK_EQ_INT(send_op(&r, &a, &msg), LGP_ENG_DEFER);
	CHECK_EQ_INT(send_op(&r, &b, &msg), LGP_ENG_DEFER);
	reenter = &r.eng;
	fake_now = 3000;
	CHECK_EQ_U64(lgp_eng_release(&r.eng, fake_now), 2);
	CHECK_EQ_U64(nposted, 2);
	CHECK_EQ_U64(lgp_stats_get(&stats, LGP_STAT_LATE_NS), 4000);
	CHECK_EQ_U64(lgp_stats_get(&stats, LGP_STAT_LATE_MAX_NS), 2000);
	reenter = NULL;
	lgp_eng_fini(&r.eng);
}

/*
 * Lateness leaves out the provider's own cost: of two sends due 100 ns
 * apart whose posts take 5 us each, the second waits for the first's post,
 * as it would without the shim; only a pass that starts late makes both
 * late, each by as much.
 */
static void test_lateness_excludes_the_providers_post(void)
{
	struct lgp_eng_msg msg = msg_of(10);
	struct rig r;
	struct op a = { .id = 1, .port = &r.port[0] };
	struct op b = { .id = 2, .port = &r.port[0] };
	struct op c = { .id = 3, .port = &r.port[0] };
	struct op d = { .id = 4, .port = &r.port[0] };

	setup(&r, (struct lgp_params){ .latency_ns = 1000 }, 16);
	post_cost = 5000;
	CHECK_EQ_INT(send_op(&r, &a, &msg), LGP_ENG_DEFER);	/* due 1000 */
	fake_now = 100;
	CHECK_EQ_INT(send_op(&r, &b, &msg), LGP_ENG_DEFER);	/* due 1100 */
	fake_now = 1000;
	CHECK_EQ_U64(lgp_eng_release(&r.eng, fake_now), 1);
	CHECK_EQ_U64(lgp_eng_release(&r.eng, fake_now), 1);	/* at 6000 */
	CHECK_EQ_U64(lgp_stats_get(&stats, LGP_STAT_RELEASES), 2);
	CHECK_EQ_U64(lgp_stats_get(&stats, LGP_STAT_LATE_NS), 0);

	fake_now = 20000;
	CHECK_EQ_INT(send_op(&r, &c, &msg), LGP_ENG_DEFER);	/* due 21000 */
	CHECK_EQ_INT(send_op(&r, &d, &msg), LGP_ENG_DEFER);	/* due 21000 */
	fake_now = 23000;					/* 2 us late */
	CHECK_EQ_U64(lgp_eng_release(&r.eng, fake_now), 2);
	CHECK_EQ_U64(lgp_stats_get(&stats, LGP_STAT_LATE_NS), 4000);
	CHECK_EQ_U64(lgp_stats_get(&stats, LGP_STAT_LATE_MAX_NS), 2000);
	CHECK_EQ_U64(lgp_stats_get(&stats, LGP_STAT_EARLY), 0);
	lgp_eng_fini(&r.eng);
}

/*
 * Sends falling due while the rank spins an overhead, or waits for a
 * post time, go out at their times, not after the spin.  A release that
 * posts nothing (the provider refuses, another thread holds the lock) is
 * retried while spinning and never makes the spin longer.
 */
static void test_release_while_spinning(void)
{
	struct lgp_eng_msg msg = msg_of(10);
	struct rig r;
	struct op a = { .id = 1, .port = &r.port[0] };
	struct op b = { .id = 2, .port = &r.port[0] };
	struct op c = { .id = 3, .port = &r.port[1] };
	struct op d = { .id = 4, .port = &r.port[3] };
	struct lgp_eng_msg bare = { .len = 10 };

	setup(&r, (struct lgp_params){ .send_overhead_ns = 10000,
				       .recv_overhead_ns = 10000,
				       .latency_ns = 3000 }, 16);
	CHECK_EQ_INT(send_op(&r, &a, &msg), LGP_ENG_DEFER);	/* due 3000 */
	fake_now = 1000;
	CHECK_EQ_INT(send_op(&r, &b, &msg), LGP_ENG_DEFER);	/* due 4000 */
	fake_now = 2000;
	lgp_eng_send_overhead(&r.eng);
	CHECK_EQ_U64(fake_now, 12000);
	CHECK_EQ_U64(nposted, 2);
	CHECK(posted[0] == 1 && posted_at[0] == 3000);
	CHECK(posted[1] == 2 && posted_at[1] == 4000);
	CHECK_EQ_U64(lgp_stats_get(&stats, LGP_STAT_LATE_NS), 0);

	CHECK_EQ_INT(send_op(&r, &c, &msg), LGP_ENG_DEFER);	/* due 15000 */
	refuse_posts = 1000;
	lgp_eng_recv_overhead(&r.eng, 1);
	CHECK_EQ_U64(fake_now, 22000);
	CHECK(refuse_posts < 1000);
	refuse_posts = 0;
	lock_busy = true;
	lgp_eng_send_overhead(&r.eng);
	CHECK_EQ_U64(fake_now, 32000);
	CHECK_EQ_U64(nposted, 2);
	CHECK_EQ_U64(lgp_eng_next_release(&r.eng), 15000);
	lock_busy = false;
	lgp_eng_send_overhead(&r.eng);
	CHECK_EQ_U64(fake_now, 42000);
	CHECK(nposted == 3 && posted[2] == 3 && posted_at[2] == 32000);

	/* so does a send that waits for its own post time (no transmit CQ) */
	CHECK_EQ_INT(send_op(&r, &d, &msg), LGP_ENG_DEFER);	/* due 45000 */
	fake_now = 43000;
	CHECK_EQ_INT(lgp_eng_submit(&r.eng, &r.port[2], &bare, &r.plan),
		     LGP_ENG_WAIT);
	lgp_eng_wait(&r.eng, &r.plan);
	CHECK_EQ_U64(fake_now, 46000);
	CHECK(nposted == 4 && posted[3] == 4 && posted_at[3] == 45000);
	lgp_eng_fini(&r.eng);
}

/* o_r: spun per receive completion, nothing for none. */
static void test_recv_overhead(void)
{
	struct rig r;

	setup(&r, (struct lgp_params){ .recv_overhead_ns = 300 }, 0);
	fake_now = 100;
	lgp_eng_recv_overhead(&r.eng, 0);
	CHECK_EQ_U64(fake_now, 100);
	lgp_eng_recv_overhead(&r.eng, 4);
	CHECK_EQ_U64(fake_now, 1300);
	CHECK_EQ_U64(lgp_stats_get(&stats, LGP_STAT_RECV_OVERHEAD_NS), 1200);
	/* an engine without a queue releases nothing and holds nothing */
	CHECK_EQ_U64(lgp_eng_release(&r.eng, UINT64_MAX), 0);
	CHECK_EQ_U64(lgp_eng_queued(&r.eng), 0);
	lgp_eng_fini(&r.eng);
}

/*
 * A drawn L: each operation its own draw from the seed's stream, post_at
 * raised to the port's previous one so the port stays in order, the L
 * each got counted and histogrammed; a cancelled send takes its raise
 * back.  Without a distribution nothing changes (the tests above).
 */
static void test_drawn_latency(void)
{
	struct lgp_eng_msg msg = msg_of(10);
	struct lgp_dist dist;
	struct lgp_dist_rng rng;
	struct op ops[16];
	struct rig r;
	uint64_t due, last = 0, total = 0, hist = 0, raised = 0, drawn;
	unsigned int i;

	CHECK_EQ_INT(lgp_dist_config(&dist, "uniform:50us", NULL, "7", 100000,
				     NULL, 0), 0);
	setup(&r, (struct lgp_params){ .latency_ns = 100000 }, 32);
	lgp_eng_set_dist(&r.eng, &dist, 3);
	lgp_stats_delay_init(&stats, lgp_dist_max_ns(&dist));
	lgp_dist_rng_init(&rng, &dist, 3);
	for (i = 0; i < 16; i++) {
		ops[i] = (struct op){ .id = (int)i, .port = &r.port[0] };
		fake_now = i * 1000;
		CHECK_EQ_INT(send_op(&r, &ops[i], &msg), LGP_ENG_DEFER);
		drawn = fake_now + lgp_dist_draw(&dist, &rng);
		due = drawn > last ? drawn : last;
		raised += due > drawn;
		CHECK_EQ_U64(r.plan.post_at, due);
		CHECK_EQ_U64(r.plan.latency, due - fake_now);
		total += due - fake_now;
		last = due;
	}
	CHECK(raised > 0);	/* the draws did come out of order */
	CHECK_EQ_U64(lgp_stats_get(&stats, LGP_STAT_LATENCY_NS), total);
	for (i = 0; i < LGP_DELAY_BUCKETS; i++)
		hist += stats.delay_hist[i];
	CHECK_EQ_U64(hist, 16);
	CHECK_EQ_U64(lgp_eng_port_last_due(&r.eng, &r.port[0]),
		     last > 115000 ? last : 115000);
	fake_now = UINT64_MAX / 2;
	CHECK_EQ_U64(lgp_eng_release(&r.eng, fake_now), 16);
	for (i = 0; i < 16; i++)
		CHECK_EQ_INT(posted[i], (int)i);

	/* a cancelled reservation leaves the port's last post as it was */
	CHECK_EQ_INT(lgp_eng_submit(&r.eng, &r.port[1], &msg, &r.plan),
		     LGP_ENG_DEFER);
	CHECK(r.port[1].last_post > 0);
	lgp_eng_refuse(&r.eng, &r.port[1], &r.plan);
	CHECK_EQ_U64(r.port[1].last_post, 0);
	lgp_eng_fini(&r.eng);
	lgp_dist_fini(&dist);
}

/*
 * A schedule's steps apply at their times from the origin: an operation
 * gets the knobs of the step in effect when it is submitted, its port is
 * paced at the new G keeping its state, each step's messages and L are
 * counted, and an L a step lowers does not overtake the queued one.
 */
static void test_schedule(void)
{
	struct lgp_sched_step step[3] = {
		{ .at_ns = 0, .params = { .latency_ns = 1000 } },
		{ .at_ns = 5000, .params = { .latency_ns = 20000, .bulk_gap_fs = 1000000 } },
		{ .at_ns = 9000, .params = { .latency_ns = 0, .bulk_gap_fs = 1000000 } },
	};
	struct lgp_sched sched = { .steps = 3, .step = step };
	struct lgp_eng_msg m = msg_of(100);
	uint64_t counts[6] = { 0 };
	struct rig r;
	struct lgp_eng_port *port = &r.port[0];
	struct op a = { .id = 1, .port = port }, b = { .id = 2, .port = port },
		  c = { .id = 3, .port = port };

	setup(&r, (struct lgp_params){ 0 }, 16);
	fake_now = 100;
	/* the origin 100 ns before the clock's now: step 0 at once */
	lgp_eng_set_sched(&r.eng, &sched, 0, counts);
	CHECK_EQ_U64(r.eng.params.latency_ns, 1000);
	CHECK_EQ_INT(send_op(&r, &a, &m), LGP_ENG_DEFER);
	CHECK_EQ_U64(r.plan.post_at, 1100);
	/* at 5000 step 1: L 20 us, G 1 ns/B on the same port (a leaves first) */
	fake_now = 5000;
	CHECK_EQ_INT(send_op(&r, &b, &m), LGP_ENG_DEFER);
	CHECK_EQ_U64(r.eng.step, 1);
	CHECK_EQ_U64(r.plan.left, 5100);
	CHECK_EQ_U64(r.plan.post_at, 25100);
	/* at 9000 step 2: L 0, yet it waits for the queued one before it */
	fake_now = 9000;
	CHECK_EQ_INT(send_op(&r, &c, &m), LGP_ENG_DEFER);
	CHECK_EQ_U64(r.plan.post_at, 25100);
	CHECK_EQ_U64(r.plan.latency, 25100 - 9100);
	CHECK_EQ_U64(counts[0], 1);
	CHECK_EQ_U64(counts[1], 1);
	CHECK_EQ_U64(counts[2], 1);
	CHECK_EQ_U64(counts[3], 1000);
	CHECK_EQ_U64(counts[4], 20000);
	CHECK_EQ_U64(counts[5], 16000);
	CHECK_EQ_U64(r.eng.next_step, UINT64_MAX);
	fake_now = 25100;
	CHECK_EQ_U64(lgp_eng_release(&r.eng, fake_now), 2);
	CHECK_EQ_U64(nposted, 3);
	CHECK(posted[0] == 1 && posted[1] == 2 && posted[2] == 3);
	lgp_eng_fini(&r.eng);
}

int main(void)
{
	test_post_at_once();
	test_send_overhead();
	test_gap_bulk_latency();
	test_returned_data();
	test_order();
	test_pair_latency();
	test_pair_path();
	test_release_order();
	test_wait_without_cq();
	test_full();
	test_cancel();
	test_release_reentry();
	test_lateness_excludes_the_providers_post();
	test_release_while_spinning();
	test_recv_overhead();
	test_drawn_latency();
	test_schedule();
	return check_done("test_engine");
}

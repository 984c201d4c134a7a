/* SPDX-License-Identifier: MIT */
/* The delay engine (lgp_engine.h): pacing, deferral and release. */
#include <errno.h>
#include <string.h>

#include "lgp_engine.h"

/* How soon a spin tries again a release that posted nothing. */
#define LGP_ENG_SPIN_RETRY_NS	1000ULL

static uint64_t lgp_eng_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

int lgp_eng_init(struct lgp_engine *eng, const struct lgp_params *params,
		 const struct lgp_eng_ops *ops, struct lgp_stats *stats,
		 size_t depth)
{
	memset(eng, 0, sizeof(*eng));
	eng->params = *params;
	eng->ops = ops;
	eng->stats = stats;
	eng->next_release = UINT64_MAX;
	eng->next_step = UINT64_MAX;
	eng->dist_latency_ns = params->latency_ns;
	return depth ? lgp_dq_init(&eng->queue, depth) : 0;
}

void lgp_eng_fini(struct lgp_engine *eng)
{
	lgp_dq_fini(&eng->queue);
}

void lgp_eng_set_dist(struct lgp_engine *eng, const struct lgp_dist *dist,
		      uint64_t stream)
{
	if (!lgp_dist_active(dist))
		return;
	eng->dist = dist;
	lgp_dist_rng_init(&eng->rng, dist, stream);
}

/*
 * The overheads are read without the lock (lgp_eng_send_overhead(), the
 * counters), so a step stores each param atomically.
 */
static void lgp_eng_step(struct lgp_engine *eng, uint64_t now)
{
	const struct lgp_sched *s = eng->sched;
	const uint64_t *from;
	uint64_t *to = (uint64_t *)&eng->params;
	size_t i;

	eng->step = lgp_sched_step_at(s, eng->sched_origin, eng->step, now);
	eng->next_step = lgp_sched_due(s, eng->sched_origin, eng->step + 1);
	from = (const uint64_t *)&s->step[eng->step].params;
	for (i = 0; i < sizeof(eng->params) / sizeof(uint64_t); i++)
		__atomic_store_n(&to[i], from[i], __ATOMIC_RELAXED);
}

void lgp_eng_set_sched(struct lgp_engine *eng, const struct lgp_sched *sched,
		       int64_t origin, uint64_t *counts)
{
	eng->sched = sched;
	eng->sched_origin = origin;
	eng->step_counts = counts;
	eng->step = 0;
	lgp_eng_step(eng, eng->ops->now());
}

void lgp_eng_port_init(const struct lgp_engine *eng, struct lgp_eng_port *port)
{
	memset(port, 0, sizeof(*port));
	lgp_pacer_init(&port->pacer, eng->params.gap_ns, eng->params.bulk_gap_fs);
}

/*
 * Spins until deadline, releasing each item at its time.  A
 * release that posts nothing (the provider full, the lock busy on another
 * thread) is tried again LGP_ENG_SPIN_RETRY_NS later, never past the
 * deadline: a peer that also spins may be what keeps the provider full.
 */
static void lgp_eng_spin_releasing(struct lgp_engine *eng, uint64_t deadline)
{
	const struct lgp_eng_ops *ops = eng->ops;
	uint64_t next, retry;

	while (ops->try_release && (next = lgp_eng_next_release(eng)) < deadline &&
	       ops->now() < deadline) {
		ops->spin_until(next);
		if (ops->try_release(eng, ops->now()))
			continue;
		retry = lgp_eng_add(ops->now(), LGP_ENG_SPIN_RETRY_NS);
		ops->spin_until(retry < deadline ? retry : deadline);
	}
	ops->spin_until(deadline);
}

void lgp_eng_send_overhead(struct lgp_engine *eng)
{
	uint64_t o_s = __atomic_load_n(&eng->params.send_overhead_ns, __ATOMIC_RELAXED);

	if (!o_s)
		return;
	lgp_eng_spin_releasing(eng, lgp_eng_add(eng->ops->now(), o_s));
	lgp_stats_add(eng->stats, LGP_STAT_SEND_OVERHEAD_NS, o_s);
}

/*
 * The port is busy for the data whichever way it flows, so reads share
 * it with sends.  A read's request is small and leaves at start; its data
 * is on the wire for n*G and crosses back, so the application sees it no
 * earlier than start + L + n*G + L.
 */
static void lgp_eng_reserve(struct lgp_engine *eng, struct lgp_eng_port *port,
			    const struct lgp_eng_msg *msg,
			    struct lgp_eng_plan *plan)
{
	const struct lgp_params *p = &eng->params;
	uint64_t L = p->latency_ns, due, path_left;

	if (eng->dist) {
		L = lgp_dist_draw(eng->dist, &eng->rng) + L;
		L = L > eng->dist_latency_ns ? L - eng->dist_latency_ns : 0;
	}
	L += msg->pair_latency_ns;
	/* A step changed g or G: the port keeps its state, paced anew. */
	if (port->pacer.gap_ns != p->gap_ns || port->pacer.bulk_gap_fs != p->bulk_gap_fs)
		lgp_pacer_set(&port->pacer, p->gap_ns, p->bulk_gap_fs, 0);
	plan->step = eng->step;
	plan->saved = port->pacer;
	plan->saved_last_post = port->last_post;
	plan->left = lgp_pacer_inject(&port->pacer, plan->ready, msg->len,
				      &plan->start);
	plan->path = msg->path;
	plan->paced = 0;
	if (msg->path) {
		plan->saved_path = *msg->path;
		path_left = lgp_pacer_inject(msg->path, plan->start, msg->len,
					     &plan->start);
		if (path_left > plan->left) {
			plan->paced = path_left - plan->left;
			plan->left = path_left;
		}
	}
	if (msg->returns_data) {
		plan->return_at = lgp_eng_add(plan->left, lgp_eng_add(L, L));
		plan->post_at = lgp_eng_add(plan->start, L);
	} else {
		plan->return_at = 0;
		plan->post_at = lgp_eng_add(plan->left, L);
	}
	plan->latency = L;
	/* A drawn L, or one a step lowered, must not overtake what went before. */
	if (eng->dist || eng->sched) {
		due = lgp_dist_in_order(&port->last_post, plan->post_at);
		plan->latency += due - plan->post_at;
		plan->post_at = due;
	} else if (plan->post_at > port->last_post) {
		port->last_post = plan->post_at;
	}
}

static enum lgp_eng_verdict lgp_eng_verdict(struct lgp_engine *eng,
					    struct lgp_eng_port *port,
					    const struct lgp_eng_msg *msg,
					    struct lgp_eng_plan *plan)
{
	uint64_t now = plan->now;

	if (plan->post_at > now && !msg->has_tx_cq && !port->queued_msgs)
		return LGP_ENG_WAIT;
	if (plan->post_at <= now && !port->queued_msgs &&
	    !(msg->returns_data && plan->return_at > now))
		return LGP_ENG_POST;
	if (port->queued_msgs >= LGP_EP_QUEUE_MSGS ||
	    (port->queued_msgs &&
	     port->queued_bytes + msg->len > LGP_EP_QUEUE_BYTES) ||
	    lgp_dq_full(&eng->queue) || msg->tx_cq_full) {
		lgp_eng_refuse(eng, port, plan);
		return LGP_ENG_FULL;
	}
	return LGP_ENG_DEFER;
}

enum lgp_eng_verdict lgp_eng_submit(struct lgp_engine *eng,
				    struct lgp_eng_port *port,
				    const struct lgp_eng_msg *msg,
				    struct lgp_eng_plan *plan)
{
	plan->ready = plan->now = eng->ops->now();
	lgp_eng_release(eng, plan->now);
	lgp_eng_reserve(eng, port, msg, plan);
	return lgp_eng_verdict(eng, port, msg, plan);
}

void lgp_eng_wait(struct lgp_engine *eng, const struct lgp_eng_plan *plan)
{
	lgp_eng_spin_releasing(eng, plan->post_at);
}

enum lgp_eng_verdict lgp_eng_decide(struct lgp_engine *eng,
				    struct lgp_eng_port *port,
				    const struct lgp_eng_msg *msg,
				    struct lgp_eng_plan *plan)
{
	plan->now = eng->ops->now();
	return lgp_eng_verdict(eng, port, msg, plan);
}

void lgp_eng_posted(struct lgp_engine *eng, const struct lgp_eng_msg *msg,
		    const struct lgp_eng_plan *plan)
{
	struct lgp_stats *s = eng->stats;

	lgp_stats_add(s, LGP_STAT_MSGS, 1);
	lgp_stats_add(s, LGP_STAT_BYTES, msg->len);
	lgp_stats_add(s, LGP_STAT_GAP_NS, plan->start - plan->ready);
	lgp_stats_add(s, LGP_STAT_BULK_GAP_NS, plan->left - plan->start);
	lgp_stats_add(s, LGP_STAT_LATENCY_NS, plan->latency);
	if (eng->dist)
		lgp_stats_delay(s, plan->latency);
	if (eng->step_counts) {
		__atomic_fetch_add(&eng->step_counts[plan->step], 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&eng->step_counts[eng->sched->steps + plan->step],
				   plan->latency, __ATOMIC_RELAXED);
	}
}

void lgp_eng_cancel(struct lgp_eng_port *port, const struct lgp_eng_plan *plan)
{
	port->pacer = plan->saved;
	port->last_post = plan->saved_last_post;
	if (plan->path)
		*plan->path = plan->saved_path;
}

void lgp_eng_refuse(struct lgp_engine *eng, struct lgp_eng_port *port,
		    const struct lgp_eng_plan *plan)
{
	lgp_eng_cancel(port, plan);
	lgp_stats_add(eng->stats, LGP_STAT_EAGAIN, 1);
}

int lgp_eng_queue(struct lgp_engine *eng, struct lgp_eng_port *port,
		  const struct lgp_eng_msg *msg, const struct lgp_eng_plan *plan,
		  void *item)
{
	int ret = lgp_dq_push(&eng->queue, plan->post_at, item);

	if (ret)
		return ret;
	port->queued_msgs++;
	port->queued_bytes += msg->len;
	lgp_eng_posted(eng, msg, plan);
	if (plan->post_at < eng->next_release)
		__atomic_store_n(&eng->next_release, plan->post_at,
				 __ATOMIC_RELEASE);
	lgp_stats_max(eng->stats, LGP_STAT_MAX_QUEUE_DEPTH,
		      lgp_dq_size(&eng->queue));
	return 0;
}

void lgp_eng_dequeued(struct lgp_eng_port *port, uint64_t len)
{
	port->queued_msgs--;
	port->queued_bytes -= len;
}

size_t lgp_eng_release(struct lgp_engine *eng, uint64_t now)
{
	const struct lgp_dq_slot *head;
	uint64_t due, posted = 0, end, sched;
	size_t n = 0;

	if (eng->sched && now >= eng->next_step)
		lgp_eng_step(eng, now);
	if (eng->releasing)
		return 0;
	eng->releasing = true;
	while ((head = lgp_dq_head(&eng->queue)) && head->release_ns <= now) {
		/*
		 * Post the head before popping it: if the provider's queue is
		 * full the head stays first, so no later operation overtakes
		 * it.
		 */
		due = head->release_ns;
		/* One clock read per post: the previous post's end starts this. */
		if (!posted)
			posted = eng->ops->now();
		if (eng->ops->post(head->item) == -EAGAIN)
			break;
		end = eng->ops->now();
		/*
		 * The provider takes posts one at a time, each for as long as
		 * its own send costs (~5 us of socket writes on tcp): that is
		 * the native stack's gap, the port in series with the shim's,
		 * not the shim's error.  So an item's lateness is counted from
		 * when it could have gone had every release been on time: its
		 * due time, or the end of the previous post on that schedule.
		 */
		sched = due > eng->post_free ? due : eng->post_free;
		lgp_stats_release(eng->stats, sched, posted);
		eng->post_free = sched + (end - posted);
		lgp_dq_pop_due(&eng->queue, now);
		posted = end;
		n++;
	}
	__atomic_store_n(&eng->next_release, lgp_dq_next(&eng->queue),
			 __ATOMIC_RELEASE);
	eng->releasing = false;
	return n;
}

uint64_t lgp_eng_return_time(const struct lgp_engine *eng, uint64_t return_at,
			     uint64_t now)
{
	uint64_t t = lgp_eng_add(now, eng->params.latency_ns);

	return t > return_at ? t : return_at;
}

uint64_t lgp_eng_port_last_due(const struct lgp_engine *eng,
			       const struct lgp_eng_port *port)
{
	uint64_t due = lgp_eng_add(lgp_pacer_free_ns(&port->pacer),
				   eng->params.latency_ns);

	return due > port->last_post ? due : port->last_post;
}

void lgp_eng_recv_overhead(struct lgp_engine *eng, uint64_t nrecv)
{
	uint64_t o_r = __atomic_load_n(&eng->params.recv_overhead_ns, __ATOMIC_RELAXED);

	if (!o_r || !nrecv)
		return;
	lgp_eng_spin_releasing(eng, lgp_eng_add(eng->ops->now(), nrecv * o_r));
	lgp_stats_add(eng->stats, LGP_STAT_RECV_OVERHEAD_NS, nrecv * o_r);
}

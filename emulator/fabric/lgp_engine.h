/* SPDX-License-Identifier: MIT */
/*
 * The delay engine: every scheduling decision the shim makes for a
 * send-type operation, apart from libfabric (docs/design.md, "LogGP
 * semantics"; README.md, "What add Δ does").  The shim's objects drive
 * it (lgp_send.c, lgp_domain.c, lgp_cq.c, lgp_cntr.c); its tests run it
 * alone on a fake clock (tests/test_engine.c).
 *
 * One engine per domain holds the knobs, the delay queue of deferred
 * operations and the counters; one port per endpoint holds its pacer and
 * what it has queued.  An operation of n bytes submitted on a port:
 *
 *   o_s    lgp_eng_send_overhead() spins o_s before the caller takes its
 *          lock; the clock read after it is when the operation is ready.
 *   g, G   the port is reserved (lgp/pacer.h): start = max(ready,
 *          port_free), left = start + n*G, port free again at
 *          start + max(g, n*G).  A topology's path towards the
 *          destination (msg->path: its own pacer of the pair's g and G,
 *          lgp_topo.h) is reserved in series, from the port's start:
 *          the operation starts when both are free and has left when
 *          both have let it through, so the narrower of the two sets
 *          its n*G (plan->paced: what the path added).
 *   L      it is due at post_at = left + L.  An operation whose data
 *          comes back (a read, a fetching atomic) is a small request
 *          that leaves at start: post_at = start + L; its data is seen
 *          no earlier than return_at = left + 2L (start + L + n*G + L).
 *          With a distribution (lgp_eng_set_dist, lgp/dist.h) L is drawn
 *          once per operation, and post_at is raised to the port's
 *          previous post_at if it came out earlier, so the port's
 *          operations still reach the provider in order; without one L
 *          is the knob and nothing is drawn.  A topology's latency
 *          towards the destination (msg->pair_latency_ns, lgp_topo.h)
 *          adds to either; destinations of one port may then overtake
 *          each other, never two messages to one destination (their
 *          post times grow with left).  Data that crosses back
 *          after a real completion comes the knob's L later
 *          (lgp_eng_return_time).  A send refused (FULL) or cancelled
 *          does not give its draw back.
 *   verdict
 *          POST   now: it is due, nothing of its port is queued ahead,
 *                 and returned data (if any) could already be seen;
 *          WAIT   its endpoint has no transmit CQ (the shim could not
 *                 tell when a deferred payload is free again) and
 *                 nothing is queued: the caller waits for post_at
 *                 (lgp_eng_wait) and asks again (lgp_eng_decide);
 *          FULL   back-pressure (-FI_EAGAIN): the port has
 *                 LGP_EP_QUEUE_MSGS operations queued, or something
 *                 queued and LGP_EP_QUEUE_BYTES bytes with this one, or
 *                 the engine's queue or the transmit CQ's synthesised
 *                 completions are full; the reservation is undone;
 *          DEFER  the operation waits in the engine's queue until
 *                 post_at (lgp_eng_queue); its local completion is due
 *                 at left, so L never delays it.
 *   release
 *          lgp_eng_release() hands due operations to ops->post in order
 *          of post_at, first in first out among equal times; one the
 *          provider refuses with -EAGAIN stays first and ends the pass.
 *          A port's post times never decrease, so its operations reach
 *          the provider in the order they were issued.
 *   o_r    lgp_eng_recv_overhead() spins o_r per receive completion.
 *   steps  With a schedule (lgp_eng_set_sched, lgp/sched.h) the knobs
 *          change at its times: lgp_eng_release() (every submit, CQ or
 *          counter read and the progress thread's pass) moves to the
 *          step due at its now, and an operation gets the knobs of the
 *          step in effect when it is submitted; a port's pacer takes
 *          the new g and G at its next reservation, keeping its state.
 *          A drawn L moves by the step's latency less the knob's; as with
 *          a distribution, post_at is raised to the port's previous one,
 *          so a step that lowers L keeps the port's order.
 *   spins  o_s, o_r and a wait are spun releasing what falls due
 *          meanwhile (ops->try_release): a rank busy in the shim is not
 *          the network, and while the ranks fill the cores nothing else
 *          releases on time (the progress thread only runs on a free one).
 *
 * Locking: the domain's lock serialises every call on an engine and its
 * ports, except lgp_eng_send_overhead(), lgp_eng_recv_overhead() and
 * lgp_eng_wait() (called without it: they take it through
 * ops->try_release) and
 * lgp_eng_next_release() (an atomic read for the progress thread).
 * Nothing here allocates after init.
 */
#ifndef LGP_ENGINE_H
#define LGP_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <lgp/dist.h>
#include <lgp/dqueue.h>
#include <lgp/knob.h>
#include <lgp/pacer.h>
#include <lgp/sched.h>
#include <lgp/stats.h>

/* Limits of one endpoint's queued operations (back-pressure beyond them). */
#define LGP_EP_QUEUE_MSGS	1024
#define LGP_EP_QUEUE_BYTES	(64ULL << 20)

struct lgp_engine;

/* The engine's clock and its way to the provider. */
struct lgp_eng_ops {
	uint64_t (*now)(void);
	void (*spin_until)(uint64_t deadline_ns);
	/*
	 * Releases what is due at now (lgp_eng_release) if the engine's lock
	 * is free, and returns how many it released: 0 if the lock is busy.
	 * Called while an overhead is spun, without the lock.  NULL: an
	 * overhead only spins.
	 */
	size_t (*try_release)(struct lgp_engine *eng, uint64_t now);
	/*
	 * Hands a due item to the provider.  -EAGAIN keeps it first in the
	 * queue and ends the pass; any other return means it left the queue
	 * (posted, or failed and accounted for by the callee).
	 */
	ssize_t (*post)(void *item);
};

struct lgp_engine {
	struct lgp_params params;
	const struct lgp_eng_ops *ops;
	struct lgp_stats *stats;	/* the fabric's, updated atomically */
	struct lgp_dq queue;		/* deferred operations by post time */
	uint64_t next_release;		/* the queue's head, for other threads */
	uint64_t post_free;		/* the provider free again, had every
					   release been on time (lateness) */
	bool releasing;			/* lgp_eng_release() is running */
	const struct lgp_dist *dist;	/* L drawn from it; NULL: the knob */
	struct lgp_dist_rng rng;
	uint64_t dist_latency_ns;	/* the latency dist draws around */
	const struct lgp_sched *sched;	/* knobs over time, or NULL */
	int64_t sched_origin;		/* its time 0 on ops->now's clock */
	uint32_t step;			/* the step in effect */
	uint64_t next_step;		/* when the next falls due; UINT64_MAX */
	uint64_t *step_counts;		/* [2 steps]: messages and L per step */
};

struct lgp_eng_port {
	struct lgp_pacer pacer;
	size_t queued_msgs;	/* deferred, not yet handed over */
	size_t queued_bytes;
	uint64_t last_post;	/* the latest post_at */
};

/* What the engine needs to know of an operation. */
struct lgp_eng_msg {
	uint64_t len;		/* bytes: payload, or data read back */
	bool returns_data;	/* a read or a fetching atomic */
	bool has_tx_cq;		/* its endpoint has a transmit CQ */
	bool tx_cq_full;	/* that CQ cannot take another completion */
	uint64_t pair_latency_ns;	/* the topology's, towards its destination */
	struct lgp_pacer *path;		/* the path's pacer towards it, or NULL */
};

/* The times of one submitted operation. */
struct lgp_eng_plan {
	uint64_t ready;		/* the clock at the reservation */
	uint64_t now;		/* the clock at the last decision */
	uint64_t start;		/* it starts leaving the port */
	uint64_t left;		/* it has left: local completion */
	uint64_t post_at;	/* it goes to the provider */
	uint64_t return_at;	/* returned data is seen, if any */
	uint64_t latency;	/* the L it got: drawn, the topology's added,
				   raised for order */
	uint32_t step;		/* the schedule's step it was reserved under */
	uint64_t paced;		/* how much later it left for its path */
	struct lgp_pacer saved;	/* the port before the reservation */
	struct lgp_pacer *path;	/* the path reserved, and it before */
	struct lgp_pacer saved_path;
	uint64_t saved_last_post;
};

enum lgp_eng_verdict {
	LGP_ENG_POST,
	LGP_ENG_WAIT,
	LGP_ENG_FULL,
	LGP_ENG_DEFER,
};

/*
 * depth: how many operations the queue holds, 0 for none (a domain with
 * every knob zero never defers).  Returns 0 or -ENOMEM; lgp_eng_fini()
 * is safe after a failed init.
 */
int lgp_eng_init(struct lgp_engine *eng, const struct lgp_params *params,
		 const struct lgp_eng_ops *ops, struct lgp_stats *stats,
		 size_t depth);
void lgp_eng_fini(struct lgp_engine *eng);

/*
 * Draws L from dist (shared, read-only) with the stream-th generator of
 * its seed, before the engine's first submit; a constant dist changes
 * nothing.
 */
void lgp_eng_set_dist(struct lgp_engine *eng, const struct lgp_dist *dist,
		      uint64_t stream);

/*
 * Applies sched (shared, read-only; at least one step) from now on, its
 * time 0 at origin on ops->now's clock; counts each step's operations and
 * the L they got in counts[k] and counts[steps + k] (atomically), if not
 * NULL.  Before the engine's first submit.
 */
void lgp_eng_set_sched(struct lgp_engine *eng, const struct lgp_sched *sched,
		       int64_t origin, uint64_t *counts);

void lgp_eng_port_init(const struct lgp_engine *eng, struct lgp_eng_port *port);

/* Spins o_s and counts it. */
void lgp_eng_send_overhead(struct lgp_engine *eng);

/*
 * Releases what is due, reserves the port for the operation at the
 * clock's now and decides.  On FULL the reservation is already undone
 * and counted as an -EAGAIN.
 */
enum lgp_eng_verdict lgp_eng_submit(struct lgp_engine *eng,
				    struct lgp_eng_port *port,
				    const struct lgp_eng_msg *msg,
				    struct lgp_eng_plan *plan);

/* After a WAIT: spins until plan->post_at (the caller drops its lock). */
void lgp_eng_wait(struct lgp_engine *eng, const struct lgp_eng_plan *plan);

/* After a WAIT: decides again at the clock's now (never WAIT again). */
enum lgp_eng_verdict lgp_eng_decide(struct lgp_engine *eng,
				    struct lgp_eng_port *port,
				    const struct lgp_eng_msg *msg,
				    struct lgp_eng_plan *plan);

/* POST: the provider took the operation; counts it. */
void lgp_eng_posted(struct lgp_engine *eng, const struct lgp_eng_msg *msg,
		    const struct lgp_eng_plan *plan);

/* POST or DEFER failed in the caller: the port is as before the submit. */
void lgp_eng_cancel(struct lgp_eng_port *port, const struct lgp_eng_plan *plan);

/* DEFER failed for want of room in the caller: cancels, counts -EAGAIN. */
void lgp_eng_refuse(struct lgp_engine *eng, struct lgp_eng_port *port,
		    const struct lgp_eng_plan *plan);

/*
 * DEFER: queues item (not NULL) until plan->post_at and counts it.
 * Returns 0, or -EAGAIN if the queue is full (not after a DEFER).
 */
int lgp_eng_queue(struct lgp_engine *eng, struct lgp_eng_port *port,
		  const struct lgp_eng_msg *msg, const struct lgp_eng_plan *plan,
		  void *item);

/* A queued operation of len bytes was handed over (or failed). */
void lgp_eng_dequeued(struct lgp_eng_port *port, uint64_t len);

/*
 * Hands every operation due at now to ops->post, in order, and records
 * how late each was; returns how many.  A post that comes back into the
 * engine (a provider calling the application, which sends) finds the
 * pass running and releases nothing: the outer pass owns the head.
 */
size_t lgp_eng_release(struct lgp_engine *eng, uint64_t now);

/* The earliest post time queued, UINT64_MAX for none; any thread. */
static inline uint64_t lgp_eng_next_release(const struct lgp_engine *eng)
{
	return __atomic_load_n(&eng->next_release, __ATOMIC_ACQUIRE);
}

static inline size_t lgp_eng_queued(const struct lgp_engine *eng)
{
	return lgp_dq_size(&eng->queue);
}

/*
 * When the application may see the data of an operation that returns
 * some and whose real completion came at now: L later (the data crosses
 * back), and not before plan->return_at.
 */
uint64_t lgp_eng_return_time(const struct lgp_engine *eng, uint64_t return_at,
			     uint64_t now);

/*
 * When the port's last queued operation is due: port free + L, or its
 * latest post time if that is later (a drawn L).
 */
uint64_t lgp_eng_port_last_due(const struct lgp_engine *eng,
			       const struct lgp_eng_port *port);

/* Spins o_r for each of nrecv receive completions and counts it. */
void lgp_eng_recv_overhead(struct lgp_engine *eng, uint64_t nrecv);

#endif /* LGP_ENGINE_H */

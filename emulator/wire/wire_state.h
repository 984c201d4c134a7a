/* SPDX-License-Identifier: MIT */
/*
 * State shared between the forwarding lcore and the control thread:
 * per-port names, published shaping knobs and counters.
 *
 * Hand-over of knobs (one writer: the control thread; one reader: the
 * forwarding lcore).  Each port's knobs are an immutable struct behind
 * an atomic pointer.  A change copies the current struct, edits the
 * copy, swaps the pointer and frees the old struct only after a grace
 * period: the lcore advances `epoch` after every loop iteration, and
 * never keeps a knob pointer across iterations, so once epoch has moved
 * past the value read after the swap, no iteration that could have
 * loaded the old pointer is still running.  The epoch store and the
 * pointer load in the lcore are sequentially consistent so the load of
 * iteration k+1 cannot be hoisted above the store that ends iteration k
 * (that would let the writer see "k ended" while k+1 holds the old
 * pointer).  The lcore pays one fenced store per iteration, never a lock,
 * and a packet always sees one whole, consistent set of knobs.  While
 * the lcore is not running the old struct is freed at once.  If the
 * lcore does not move within a second the old struct is retired instead
 * of freed, and released at wire_state_fini().
 */
#ifndef WIRE_STATE_H
#define WIRE_STATE_H

#include <stdatomic.h>
#include <stdint.h>

#include "wire_dist.h"
#include "wire_pairs.h"
#include "wire_shape.h"
#include "wire_stats.h"

enum wire_mode {
	WIRE_MODE_SWITCH,	/* MAC learning, flood unknown/broadcast */
	WIRE_MODE_PAIR,		/* 0<->1, 2<->3, ... */
};

struct wire_shape_box;

struct wire_port {
	char name[64];
	uint32_t capacity;	/* delay line size: largest queue_pkts */
	_Atomic(struct wire_shape_box *) shape;
	struct wire_stats stats;
	/* [nports]: per source port, the packets admitted here while pairs
	 * were set and the pairs' latency they got (single writer: the lcore) */
	uint64_t *pair_pkts;
	uint64_t *pair_latency_ns;
};

struct wire_state {
	enum wire_mode mode;
	unsigned int nports;
	struct wire_port *ports;
	atomic_uint_fast64_t epoch;
	atomic_int lcore_active;
	struct wire_shape_box *retired;
	/* the delay distribution (wire_dist.h), handed over as knobs are;
	 * NULL: constant */
	_Atomic(struct wire_dist *) dist;
	struct wire_dist *retired_dist;
	uint64_t dist_gen;		/* the last box's generation */
	/* a network's per-pair delays (wire_pairs.h), handed over as the
	 * distribution is; NULL: none */
	_Atomic(struct wire_pairs *) pairs;
	struct wire_pairs *retired_pairs;
};

const char *wire_mode_name(enum wire_mode mode);

/*
 * nports ports, each with knobs *def and a delay line of capacity
 * packets; names "port<i>" until the caller sets them.  0 or -ENOMEM.
 */
int wire_state_init(struct wire_state *st, enum wire_mode mode,
		    unsigned int nports, const struct wire_shape *def,
		    uint32_t capacity);
void wire_state_fini(struct wire_state *st);

/* Lcore side: knobs for this iteration; end every iteration with quiescent. */
const struct wire_shape *wire_state_shape(struct wire_port *p);
static inline void wire_state_quiescent(struct wire_state *st)
{
	atomic_fetch_add_explicit(&st->epoch, 1, memory_order_seq_cst);
}

/* Lcore side: the distribution for this iteration (NULL: constant). */
const struct wire_dist *wire_state_dist(struct wire_state *st);
/*
 * Control side: d (NULL: constant) replaces the distribution, which the
 * state owns from now on; the old one is freed after the grace period.
 */
void wire_state_publish_dist(struct wire_state *st, struct wire_dist *d);

/* Lcore side: the per-pair delays for this iteration (NULL: none). */
const struct wire_pairs *wire_state_pairs(struct wire_state *st);
/*
 * Control side: p (NULL: none) replaces the per-pair delays, which the
 * state owns from now on; the old box is freed after the grace period.
 */
void wire_state_publish_pairs(struct wire_state *st, struct wire_pairs *p);

/* Control side: copy of port's current knobs. */
void wire_state_get(struct wire_port *p, struct wire_shape *out);
/* Control side: publish new knobs for port; 0 or -ENOMEM. */
int wire_state_publish(struct wire_state *st, unsigned int port,
		       const struct wire_shape *s);

#endif /* WIRE_STATE_H */

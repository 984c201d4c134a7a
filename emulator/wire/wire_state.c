/* SPDX-License-Identifier: MIT */
/* Shared state and the knob hand-over (see wire_state.h for the why). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wire_state.h"

struct wire_shape_box {
	struct wire_shape shape;
	struct wire_shape_box *next_retired;
};

#define WIRE_GRACE_POLL_NS	20000L
#define WIRE_GRACE_LIMIT_NS	1000000000LL

const char *wire_mode_name(enum wire_mode mode)
{
	return mode == WIRE_MODE_PAIR ? "pair" : "switch";
}

static struct wire_shape_box *wire_box_new(const struct wire_shape *s)
{
	struct wire_shape_box *b = calloc(1, sizeof(*b));

	if (b)
		b->shape = *s;
	return b;
}

int wire_state_init(struct wire_state *st, enum wire_mode mode,
		    unsigned int nports, const struct wire_shape *def,
		    uint32_t capacity)
{
	unsigned int i;

	memset(st, 0, sizeof(*st));
	st->mode = mode;
	atomic_init(&st->epoch, 0);
	atomic_init(&st->lcore_active, 0);
	atomic_init(&st->dist, NULL);
	atomic_init(&st->pairs, NULL);
	st->ports = calloc(nports ? nports : 1, sizeof(*st->ports));
	if (!st->ports)
		return -ENOMEM;
	st->nports = nports;
	for (i = 0; i < nports; i++) {
		struct wire_shape_box *b = wire_box_new(def);

		if (!b)
			goto err;
		snprintf(st->ports[i].name, sizeof(st->ports[i].name),
			 "port%u", i);
		st->ports[i].capacity = capacity;
		st->ports[i].pair_pkts = calloc(2 * (size_t)nports,
						sizeof(uint64_t));
		if (!st->ports[i].pair_pkts) {
			free(b);
			goto err;
		}
		st->ports[i].pair_latency_ns = st->ports[i].pair_pkts + nports;
		atomic_init(&st->ports[i].shape, b);
	}
	return 0;
err:
	wire_state_fini(st);
	return -ENOMEM;
}

void wire_state_fini(struct wire_state *st)
{
	struct wire_dist *d;
	struct wire_pairs *pp;
	struct wire_shape_box *b;
	unsigned int i;

	for (i = 0; st->ports && i < st->nports; i++) {
		free(atomic_load(&st->ports[i].shape));
		free(st->ports[i].pair_pkts);
	}
	while ((b = st->retired)) {
		st->retired = b->next_retired;
		free(b);
	}
	wire_dist_free(atomic_load(&st->dist));
	while ((d = st->retired_dist)) {
		st->retired_dist = d->next_retired;
		wire_dist_free(d);
	}
	wire_pairs_free(atomic_load(&st->pairs));
	while ((pp = st->retired_pairs)) {
		st->retired_pairs = pp->next_retired;
		wire_pairs_free(pp);
	}
	free(st->ports);
	memset(st, 0, sizeof(*st));
}

const struct wire_shape *wire_state_shape(struct wire_port *p)
{
	return &atomic_load_explicit(&p->shape, memory_order_seq_cst)->shape;
}

void wire_state_get(struct wire_port *p, struct wire_shape *out)
{
	*out = atomic_load(&p->shape)->shape;
}

/* Wait until the lcore has finished an iteration begun before now. */
static int wire_state_grace(struct wire_state *st)
{
	uint64_t e0 = atomic_load(&st->epoch);
	struct timespec ts = { 0, WIRE_GRACE_POLL_NS };
	long long waited = 0;

	while (atomic_load(&st->lcore_active) &&
	       atomic_load(&st->epoch) == e0) {
		if (waited >= WIRE_GRACE_LIMIT_NS)
			return -ETIMEDOUT;
		nanosleep(&ts, NULL);
		waited += WIRE_GRACE_POLL_NS;
	}
	return 0;
}

int wire_state_publish(struct wire_state *st, unsigned int port,
		       const struct wire_shape *s)
{
	struct wire_shape_box *nb, *old;

	if (port >= st->nports)
		return -EINVAL;
	nb = wire_box_new(s);
	if (!nb)
		return -ENOMEM;
	old = atomic_exchange(&st->ports[port].shape, nb);
	if (wire_state_grace(st)) {
		old->next_retired = st->retired;
		st->retired = old;
		return 0;
	}
	free(old);
	return 0;
}

const struct wire_dist *wire_state_dist(struct wire_state *st)
{
	return atomic_load_explicit(&st->dist, memory_order_seq_cst);
}

void wire_state_publish_dist(struct wire_state *st, struct wire_dist *d)
{
	struct wire_dist *old;

	if (d)
		d->gen = ++st->dist_gen;
	old = atomic_exchange(&st->dist, d);

	if (!old)
		return;
	if (wire_state_grace(st)) {
		old->next_retired = st->retired_dist;
		st->retired_dist = old;
		return;
	}
	wire_dist_free(old);
}

const struct wire_pairs *wire_state_pairs(struct wire_state *st)
{
	return atomic_load_explicit(&st->pairs, memory_order_seq_cst);
}

void wire_state_publish_pairs(struct wire_state *st, struct wire_pairs *p)
{
	struct wire_pairs *old;

	old = atomic_exchange(&st->pairs, p);
	if (!old)
		return;
	if (wire_state_grace(st)) {
		old->next_retired = st->retired_pairs;
		st->retired_pairs = old;
		return;
	}
	wire_pairs_free(old);
}

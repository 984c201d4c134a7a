/* SPDX-License-Identifier: MIT */
/* Egress shaping: loss, tail drop, GCRA pacing, delay (see wire_egress.h). */
#include <errno.h>
#include <string.h>

#include <lgp/knob.h>

#include "wire_egress.h"

uint64_t wire_rng_seed(uint64_t seed)
{
	uint64_t z = seed + 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return z ? z : 1;	/* xorshift must not start at 0 */
}

uint64_t wire_rng_next(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

int wire_egress_init(struct wire_egress *e, uint32_t cap, uint64_t seed,
		     int reorder)
{
	memset(e, 0, sizeof(*e));
	e->rng = wire_rng_seed(seed);
	e->reorder = reorder;
	return wire_dline_init(&e->line, cap);
}

void wire_egress_fini(struct wire_egress *e)
{
	wire_dline_fini(&e->line);
}

static uint64_t wire_egress_depart(struct wire_egress *e,
				   const struct wire_shape *s, uint64_t t,
				   uint32_t len)
{
	unsigned __int128 d = (unsigned __int128)t * LGP_FS_PER_NS;
	unsigned __int128 cost = 0, tau, gap_end;

	if (s->bulk_gap_fs) {
		cost = (unsigned __int128)len * s->bulk_gap_fs;
		tau = (unsigned __int128)s->burst_bytes * s->bulk_gap_fs;
		if (tau < cost)
			tau = cost;
		if (e->tat_fs + cost > tau && e->tat_fs + cost - tau > d)
			d = e->tat_fs + cost - tau;
	}
	if (s->gap_ns && e->departed) {
		gap_end = ((unsigned __int128)e->last_depart_ns + s->gap_ns) *
			  LGP_FS_PER_NS;
		if (gap_end > d)
			d = gap_end;
	}
	if (s->bulk_gap_fs)
		e->tat_fs = (e->tat_fs > d ? e->tat_fs : d) + cost;
	/* round up: a packet never leaves before its tokens are there;
	 * saturate, so absurd knobs hold packets rather than wrap to now */
	d = (d + LGP_FS_PER_NS - 1) / LGP_FS_PER_NS;
	e->last_depart_ns = d > UINT64_MAX ? UINT64_MAX : (uint64_t)d;
	e->departed = 1;
	return e->last_depart_ns;
}

static inline uint64_t wire_sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t wire_egress_delay(struct wire_egress *e,
				  const struct wire_shape *s)
{
	uint64_t d;

	if (!s->jitter_ns)
		return s->latency_ns;
	d = wire_sat_add(s->latency_ns,
			 wire_rng_next(&e->rng) % (2 * s->jitter_ns + 1));
	return d < s->jitter_ns ? 0 : d - s->jitter_ns;
}

enum wire_verdict wire_egress_admit(struct wire_egress *e,
				    const struct wire_shape *s, uint64_t now_ns,
				    void *pkt, uint32_t len,
				    uint64_t *release_ns)
{
	struct wire_dline_ent ent;
	uint64_t r;

	if (s->loss > 0.0 &&
	    (double)(wire_rng_next(&e->rng) >> 11) * 0x1.0p-53 < s->loss)
		return WIRE_DROP_LOSS;
	if (e->line.count + 1 > s->queue_pkts || e->line.count == e->line.cap ||
	    e->line.bytes + len > s->queue_bytes)
		return WIRE_DROP_QUEUE;
	r = wire_sat_add(wire_egress_depart(e, s, now_ns, len), wire_egress_delay(e, s));
	if (!e->reorder && r < e->last_release_ns)
		r = e->last_release_ns;
	if (r > e->last_release_ns)
		e->last_release_ns = r;
	ent.release_ns = r;
	ent.rx_ns = now_ns;
	ent.pkt = pkt;
	ent.len = len;
	wire_dline_push(&e->line, &ent);
	if (release_ns)
		*release_ns = r;
	return WIRE_ADMIT;
}

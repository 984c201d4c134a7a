/* SPDX-License-Identifier: MIT */
/* Egress shaping: loss, tail drop, pacing, delay (see wire_egress.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

int wire_egress_init(struct wire_egress *e, uint32_t cap, unsigned int sources,
		     uint64_t seed, int reorder)
{
	unsigned int i;

	memset(e, 0, sizeof(*e));
	if (!sources)
		return -EINVAL;
	e->rng = wire_rng_seed(seed);
	e->reorder = reorder;
	lgp_pacer_init(&e->pacer, 0, 0);
	e->last_release_ns = calloc(sources, sizeof(*e->last_release_ns));
	e->path = calloc(sources, sizeof(*e->path));
	if (!e->last_release_ns || !e->path) {
		wire_egress_fini(e);
		return -ENOMEM;
	}
	for (i = 0; i < sources; i++)
		lgp_pacer_init(&e->path[i], 0, 0);
	return lgp_dq_init(&e->line, cap);
}

void wire_egress_fini(struct wire_egress *e)
{
	lgp_dq_fini(&e->line);
	free(e->last_release_ns);
	free(e->path);
	e->last_release_ns = NULL;
	e->path = NULL;
}

static inline uint64_t wire_sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

void wire_egress_set_dist(struct wire_egress *e, const struct lgp_dist *dist,
			  uint64_t stream, struct wire_stats *stats)
{
	e->dist = NULL;
	e->stats = NULL;
	if (!dist || !lgp_dist_active(dist)) {
		if (stats)	/* no histogram shown for draws that stopped */
			wire_stat_set(&stats->late.delay_bucket_ns, 0);
		return;
	}
	e->dist = dist;
	lgp_dist_rng_init(&e->dist_rng, dist, stream);
	e->stats = stats;
	e->hist_latency_ns = UINT64_MAX;	/* started by the first packet */
}

/* L around latency_ns: dist's mean is the port's latency of the moment. */
static uint64_t wire_egress_draw(struct wire_egress *e, uint64_t latency_ns)
{
	struct lgp_dist d = *e->dist;	/* its table stays shared */
	unsigned int k;

	d.mean_ns = latency_ns;
	if (e->stats && e->hist_latency_ns != latency_ns) {
		/* only this lcore writes; readers see each count untorn */
		for (k = 0; k < LGP_DELAY_BUCKETS; k++)
			wire_stat_set(&e->stats->late.delay_hist[k], 0);
		lgp_stats_delay_init(&e->stats->late, lgp_dist_max_ns(&d));
		wire_stat_set(&e->stats->delay_latency_ns, latency_ns);
		wire_stat_add(&e->stats->delay_starts, 1);
		e->hist_latency_ns = latency_ns;
	}
	return lgp_dist_draw(&d, &e->dist_rng);
}

static uint64_t wire_egress_delay(struct wire_egress *e,
				  const struct wire_shape *s)
{
	uint64_t L = e->dist ? wire_egress_draw(e, s->latency_ns) :
			       s->latency_ns;
	uint64_t d;

	if (!s->jitter_ns)
		return L;
	d = wire_sat_add(L, wire_rng_next(&e->rng) % (2 * s->jitter_ns + 1));
	return d < s->jitter_ns ? 0 : d - s->jitter_ns;
}

enum wire_verdict wire_egress_admit(struct wire_egress *e,
				    const struct wire_shape *s,
				    unsigned int src,
				    const struct wire_pair *pair,
				    uint64_t now_ns, void *pkt, uint32_t len,
				    uint64_t *release_ns)
{
	struct lgp_dq_slot slot;
	uint64_t d, r;

	if (s->loss > 0.0 &&
	    (double)(wire_rng_next(&e->rng) >> 11) * 0x1.0p-53 < s->loss)
		return WIRE_DROP_LOSS;
	if (lgp_dq_size(&e->line) + 1 > s->queue_pkts || lgp_dq_full(&e->line) ||
	    lgp_dq_bytes(&e->line) + len > s->queue_bytes)
		return WIRE_DROP_QUEUE;
	lgp_pacer_set(&e->pacer, s->gap_ns, s->bulk_gap_fs, s->burst_bytes);
	d = lgp_pacer_start(&e->pacer, now_ns, len);
	if (pair && (pair->gap_ns || pair->bulk_gap_fs)) {
		lgp_pacer_set(&e->path[src], pair->gap_ns, pair->bulk_gap_fs, 0);
		d = lgp_pacer_start(&e->path[src], d, len);
	}
	r = wire_sat_add(d, wire_egress_delay(e, s));
	if (pair) {
		r = wire_sat_add(r, pair->latency_ns);
		if (e->pair_pkts) {
			wire_stat_add(&e->pair_pkts[src], 1);
			wire_stat_add(&e->pair_latency_ns[src],
				      pair->latency_ns);
		}
	}
	if (!e->reorder)
		r = lgp_dist_in_order(&e->last_release_ns[src], r);
	if (e->stats)
		lgp_stats_delay(&e->stats->late, r - d);
	slot = (struct lgp_dq_slot){ .release_ns = r, .item = pkt,
				     .stamp_ns = now_ns, .bytes = len };
	lgp_dq_push_slot(&e->line, &slot);
	if (release_ns)
		*release_ns = r;
	return WIRE_ADMIT;
}

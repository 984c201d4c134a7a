/* SPDX-License-Identifier: MIT */
/* Per-port counters (see wire_stats.h). */
#include "wire_stats.h"

const uint64_t wire_hist_le_us[WIRE_HIST_BINS - 1] = {
	1, 10, 100, 1000, 10000
};

unsigned int wire_hist_bin(uint64_t delay_ns)
{
	unsigned int i;

	for (i = 0; i < WIRE_HIST_BINS - 1; i++)
		if (delay_ns <= wire_hist_le_us[i] * 1000)
			return i;
	return WIRE_HIST_BINS - 1;
}

void wire_stats_tx(struct wire_stats *s, const struct lgp_dq_slot *ent,
		   uint64_t now_ns)
{
	uint64_t delay_ns = now_ns - ent->stamp_ns;

	wire_stat_add(&s->tx_pkts, 1);
	wire_stat_add(&s->tx_bytes, ent->bytes);
	wire_stat_add(&s->hist[wire_hist_bin(delay_ns)], 1);
	wire_stat_add(&s->delay_sum_ns, delay_ns);
	if (ent->release_ns > ent->stamp_ns)
		lgp_stats_release_owned(&s->late, ent->release_ns, now_ns);
}

void wire_stats_read(const struct wire_stats *s, struct wire_stats *out)
{
	const uint64_t *src = (const uint64_t *)s;
	uint64_t *dst = (uint64_t *)out;
	unsigned int i;

	for (i = 0; i < sizeof(*s) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

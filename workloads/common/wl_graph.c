/* SPDX-License-Identifier: MIT */
/* wl_graph.c: one edge of the random graphs of wl_graph.h. */
#include "wl_graph.h"
#include "wl_hash.h"
#include "wl_part.h"

int64_t wl_graph_edge(const struct wl_graph_shape *s, uint64_t key, int own, int k,
		      uint64_t *h)
{
	int64_t q = s->total < s->nranks ? s->total : s->nranks, lo, n;
	uint64_t cut = ((uint64_t)s->remote_pct << 24) / 100;
	uint64_t h1 = wl_mix64(key + (uint64_t)(k + 1) * 0xd1b54a32d192ed03ULL);
	uint64_t h2 = wl_mix64(h1 ^ 0xa0761d6478bd642fULL);
	int t = own;

	/* Only ranks that own vertices (the first min(total, N)) are targets. */
	if (q > 1 && (h1 >> 40) < cut) {
		t = (int)(h2 % (uint64_t)(q - 1));
		t += t >= own;
	}
	wl_part(s->total, s->nranks, t, &lo, &n);
	if (h)
		*h = h1;
	return lo + (int64_t)((h2 >> 32) % (uint64_t)n);
}

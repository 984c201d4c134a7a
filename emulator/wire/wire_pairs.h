/* SPDX-License-Identifier: MIT */
/*
 * A network's per-pair delays on the wire (docs/design.md, "Topology"):
 * what a frame from ingress port s to egress port d gets on top of d's
 * knobs.  Port i is node i of the experiment's network (the runner's
 * launcher puts the ranks of node i on the host behind port i).
 *
 * Set by the control socket's "pairs" request with a pair table in the
 * form lgp/pairs.h parses ('ranks N' counts ports here, N at most the
 * wire's ports); an empty table takes the pairs away.  Handed to the
 * forwarding lcore as the delay distribution is (wire_state.h): an
 * immutable box behind an atomic pointer, freed after the grace period.
 *
 * At egress d a frame from s (wire_egress.h) leaves d's port as before,
 * then the pair's path: its gap and bulk gap pace the frames from s to d
 * in series (one pacer per source at each egress), and its latency adds
 * to the release time.  Frames from one source keep their order; frames
 * from a near source may pass those from a far one, as on two paths.
 */
#ifndef WIRE_PAIRS_H
#define WIRE_PAIRS_H

#include <stddef.h>
#include <stdint.h>

struct wire_pair {
	uint64_t latency_ns;
	uint64_t gap_ns;
	uint64_t bulk_gap_fs;
};

struct wire_pairs {
	unsigned int nports;	/* the wire's, whatever N the table gave */
	unsigned int count;	/* pairs that add something */
	struct wire_pairs *next_retired;
	struct wire_pair pair[];	/* [src * nports + dst] */
};

/*
 * A box from table (lines separated by newlines) for a wire of nports;
 * NULL with one line in err and *rc set to -EINVAL or -ENOMEM.
 */
struct wire_pairs *wire_pairs_new(const char *table, unsigned int nports,
				  int *rc, char *err, size_t errlen);
void wire_pairs_free(struct wire_pairs *p);

/* What the pairs add from src to dst (all zero for some); NULL without pairs. */
static inline const struct wire_pair *wire_pairs_get(const struct wire_pairs *p,
						     unsigned int src,
						     unsigned int dst)
{
	return p ? &p->pair[(size_t)src * p->nports + dst] : NULL;
}

#endif /* WIRE_PAIRS_H */

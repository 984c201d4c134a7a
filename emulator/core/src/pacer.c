/* SPDX-License-Identifier: MIT */
/*
 * Injection pacing for g and G (pacer.h).
 *
 * Every sum saturates at UINT64_MAX: a huge bulk gap or message size must
 * hold the port "forever", never wrap around to an early time.
 */
#include "lgp/knob.h"
#include "lgp/pacer.h"

static uint64_t pacer_add_sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

void lgp_pacer_init(struct lgp_pacer *p, uint64_t gap_ns, uint64_t bulk_gap_fs)
{
	p->gap_ns = gap_ns;
	p->bulk_gap_fs = bulk_gap_fs;
	p->port_free_ns = 0;
}

uint64_t lgp_bulk_ns(uint64_t bulk_gap_fs, uint64_t nbytes)
{
	/* Both factors are below 2^64, so the product fits in 128 bits. */
	unsigned __int128 fs = (unsigned __int128)bulk_gap_fs * nbytes;
	unsigned __int128 ns = (fs + LGP_FS_PER_NS / 2) / LGP_FS_PER_NS;

	return ns > UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}

uint64_t lgp_pacer_inject(struct lgp_pacer *p, uint64_t ready_ns,
			  uint64_t nbytes, uint64_t *start_ns)
{
	uint64_t start, bulk, busy;

	start = ready_ns > p->port_free_ns ? ready_ns : p->port_free_ns;
	bulk = lgp_bulk_ns(p->bulk_gap_fs, nbytes);
	busy = bulk > p->gap_ns ? bulk : p->gap_ns;
	p->port_free_ns = pacer_add_sat(start, busy);
	if (start_ns)
		*start_ns = start;
	return pacer_add_sat(start, bulk);
}

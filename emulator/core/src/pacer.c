/* SPDX-License-Identifier: MIT */
/*
 * Injection pacing for g and G (pacer.h).
 *
 * Times are compared in femtoseconds, 128 bits wide: a nanosecond time
 * times LGP_FS_PER_NS stays below 2^85, so only the theoretical arrival
 * time can approach 2^128, and it saturates there.
 */
#include "lgp/knob.h"
#include "lgp/pacer.h"

typedef unsigned __int128 pacer_fs;

#define PACER_FS_MAX	(~(pacer_fs)0)

static uint64_t pacer_add_sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static pacer_fs pacer_add_sat_fs(pacer_fs a, pacer_fs b)
{
	return a + b < a ? PACER_FS_MAX : a + b;
}

/* Femtoseconds rounded up to nanoseconds, saturating. */
static uint64_t pacer_ceil_ns(pacer_fs fs)
{
	pacer_fs ns = fs / LGP_FS_PER_NS;

	if (ns * LGP_FS_PER_NS < fs)
		ns++;
	return ns > UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}

/* When the gap after the last start ends, or 0 before the first. */
static pacer_fs pacer_gap_end(const struct lgp_pacer *p)
{
	if (!p->gap_ns || !p->started)
		return 0;
	return ((pacer_fs)p->last_start_ns + p->gap_ns) * LGP_FS_PER_NS;
}

void lgp_pacer_init(struct lgp_pacer *p, uint64_t gap_ns, uint64_t bulk_gap_fs)
{
	*p = (struct lgp_pacer){ .gap_ns = gap_ns, .bulk_gap_fs = bulk_gap_fs };
}

void lgp_pacer_set(struct lgp_pacer *p, uint64_t gap_ns, uint64_t bulk_gap_fs,
		   uint64_t burst_bytes)
{
	p->gap_ns = gap_ns;
	p->bulk_gap_fs = bulk_gap_fs;
	p->burst_bytes = burst_bytes;
}

uint64_t lgp_bulk_ns(uint64_t bulk_gap_fs, uint64_t nbytes)
{
	/* Both factors are below 2^64, so the product fits in 128 bits. */
	pacer_fs fs = (pacer_fs)bulk_gap_fs * nbytes;
	pacer_fs ns = (fs + LGP_FS_PER_NS / 2) / LGP_FS_PER_NS;

	return ns > UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}

uint64_t lgp_pacer_start(struct lgp_pacer *p, uint64_t ready_ns,
			 uint64_t nbytes)
{
	pacer_fs ready = (pacer_fs)ready_ns * LGP_FS_PER_NS, d = ready, c = 0;
	pacer_fs slack, gap_end;

	if (p->bulk_gap_fs) {
		/* tat + c - tau, written so as not to overflow: tau >= c */
		c = (pacer_fs)nbytes * p->bulk_gap_fs;
		slack = (pacer_fs)p->burst_bytes * p->bulk_gap_fs;
		slack = slack > c ? slack - c : 0;
		if (p->tat_fs > slack && p->tat_fs - slack > d)
			d = p->tat_fs - slack;
	}
	gap_end = pacer_gap_end(p);
	if (gap_end > d)
		d = gap_end;
	if (p->bulk_gap_fs)
		p->tat_fs = pacer_add_sat_fs(p->tat_fs > d ? p->tat_fs : d, c);
	p->last_start_ns = d == ready ? ready_ns : pacer_ceil_ns(d);
	p->started = 1;
	return p->last_start_ns;
}

uint64_t lgp_pacer_inject(struct lgp_pacer *p, uint64_t ready_ns,
			  uint64_t nbytes, uint64_t *start_ns)
{
	uint64_t start = lgp_pacer_start(p, ready_ns, nbytes);

	if (start_ns)
		*start_ns = start;
	return pacer_add_sat(start, lgp_bulk_ns(p->bulk_gap_fs, nbytes));
}

uint64_t lgp_pacer_free_ns(const struct lgp_pacer *p)
{
	pacer_fs burst = (pacer_fs)p->burst_bytes * p->bulk_gap_fs;
	pacer_fs d = p->tat_fs > burst ? p->tat_fs - burst : 0;
	pacer_fs gap_end = pacer_gap_end(p);

	return pacer_ceil_ns(gap_end > d ? gap_end : d);
}

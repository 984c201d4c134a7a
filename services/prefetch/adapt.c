/* adapt.c: adaptive read-ahead of one file (pf_adapt.h). */
#include "pf_adapt.h"

#include <string.h>

void pf_adapt_init(struct pf_adapt *a, uint64_t budget, uint64_t max_fetch)
{
	memset(a, 0, sizeof(*a));
	a->budget = budget ? budget : 1;
	a->max_fetch = max_fetch ? max_fetch : 1;
	a->win = PF_ADAPT_WIN0;
}

static uint64_t end_of(const struct pf_held *h)
{
	return h->off + h->len;
}

/* The held range with at in it, or NULL. */
static struct pf_held *holding(struct pf_adapt *a, uint64_t at)
{
	for (unsigned i = 0; i < a->nheld; i++)
		if (at >= a->held[i].off && at < end_of(&a->held[i]))
			return &a->held[i];
	return NULL;
}

/* 1 when every byte of [off, end) is held; the ranges it touches are used. */
static int covers(struct pf_adapt *a, uint64_t off, uint64_t end)
{
	int all = 1;
	for (unsigned i = 0; i < a->nheld; i++)
		if (a->held[i].off < end && end_of(&a->held[i]) > off)
			a->held[i].used = 1;
	for (uint64_t at = off; at < end;) {
		struct pf_held *h = holding(a, at);
		if (!h) {
			all = 0;
			break;
		}
		at = end_of(h);
	}
	return all;
}

static void shrink(struct pf_adapt *a)
{
	a->win = a->win > 1 ? a->win / 2 : 1;
}

static void drop(struct pf_adapt *a, unsigned i)
{
	struct pf_held *h = &a->held[i];
	a->release[a->nrelease++] = (struct pf_extent){h->off, h->len};
	if (!h->used) {
		a->wasted++;
		shrink(a);
	}
	a->held_bytes -= h->len;
	memmove(h, h + 1, (a->nheld - i - 1) * sizeof(*h));
	a->nheld--;
}

/* Room for len more bytes and one more range, keeping what overlaps
 * [off, end) (the read being served); 0 when there is none. */
static int make_room(struct pf_adapt *a, uint64_t len, uint64_t off, uint64_t end)
{
	unsigned i = 0;
	while ((a->held_bytes + len > a->budget || a->nheld == PF_ADAPT_HELD) && i < a->nheld) {
		/* nor what this access fetched: its release would come first */
		if (a->held[i].fresh || (a->held[i].off < end && end_of(&a->held[i]) > off))
			i++;
		else
			drop(a, i);
	}
	return a->held_bytes + len <= a->budget && a->nheld < PF_ADAPT_HELD;
}

/* The first held range starting in (at, end), or NULL. */
static struct pf_held *next_held(struct pf_adapt *a, uint64_t at, uint64_t end)
{
	struct pf_held *best = NULL;
	for (unsigned i = 0; i < a->nheld; i++)
		if (a->held[i].off > at && a->held[i].off < end &&
		    (!best || a->held[i].off < best->off))
			best = &a->held[i];
	return best;
}

/* The first part of [at, end) not held, as [*s, *e); 0 when it is all held. */
static int next_gap(struct pf_adapt *a, uint64_t at, uint64_t end, uint64_t *s, uint64_t *e)
{
	struct pf_held *h;
	while (at < end && (h = holding(a, at)))
		at = end_of(h);
	if (at >= end)
		return 0;
	h = next_held(a, at, end);
	*s = at;
	*e = h ? h->off : end;
	return 1;
}

/* Fetches the parts of [off, end) not held, in pieces of at most
 * max_fetch; stops when the budget has no room. */
static int fetch_span(struct pf_adapt *a, uint64_t off, uint64_t end, uint64_t roff, uint64_t rend)
{
	uint64_t s, e;
	for (uint64_t at = off; next_gap(a, at, end, &s, &e);) {
		uint64_t stop = e - s > a->max_fetch ? s + a->max_fetch : e;
		if (!make_room(a, stop - s, roff, rend) || a->nfetch == PF_ADAPT_HELD)
			return 0;
		a->held[a->nheld++] = (struct pf_held){s, stop - s, 0, 1};
		a->held_bytes += stop - s;
		a->fetch[a->nfetch++] = (struct pf_extent){s, stop - s};
		at = stop;
	}
	return 1;
}

/* Bytes of [off, end) not held. */
static uint64_t missing(struct pf_adapt *a, uint64_t off, uint64_t end)
{
	uint64_t n = 0, s, e;
	for (uint64_t at = off; next_gap(a, at, end, &s, &e); at = e)
		n += e - s;
	return n;
}

/* Learns the pattern from a read that was not served from what is held
 * against the pattern's direction. */
static void learn(struct pf_adapt *a, uint64_t off, uint64_t len)
{
	int64_t d = (int64_t)(off - a->prev_off);
	if (off == a->prev_off + a->prev_len) {
		a->pat = PF_PAT_SEQUENTIAL;
		a->streak = 0;
		a->stride = d;
	} else if (d != 0 && d == a->stride) {
		a->streak++;
		a->pat = PF_PAT_STRIDED;
	} else {
		a->stride = d;
		a->streak = 0;
		a->pat = PF_PAT_NONE;
	}
	if (d > 0) {
		a->forward++;
		a->sum_step += (uint64_t)d;
		a->sum_len += a->prev_len;
	} else {
		a->forward = 0;
		a->sum_step = a->sum_len = 0;
	}
	/* gaps of at most a quarter of the reads on average: fetching them
	 * too costs a quarter more bytes, and one range instead of many
	 * (moving the bytes, not the requests, is what costs most) */
	if (a->pat == PF_PAT_NONE && a->forward >= 2 && 4 * a->sum_step <= 5 * a->sum_len)
		a->pat = PF_PAT_FORWARD;
}

/* Against the pattern: backward of a forward reader, or forward of a
 * backward one. */
static int against(const struct pf_adapt *a, uint64_t off)
{
	int backward = a->pat == PF_PAT_STRIDED && a->stride < 0;
	return backward ? off > a->prev_off : off < a->prev_off;
}

void pf_adapt_access(struct pf_adapt *a, uint64_t lo, uint64_t hi, uint64_t off, uint64_t len)
{
	a->nfetch = a->nrelease = 0;
	for (unsigned i = 0; i < a->nheld; i++)
		a->held[i].fresh = 0;
	if (!len || off >= hi)
		return;
	enum pf_pattern was = a->pat;
	int covered = covers(a, off, off + len);
	if (covered) {
		a->hits++;
		a->win = a->win * 2 <= PF_ADAPT_WIN ? a->win * 2 : PF_ADAPT_WIN;
	} else {
		a->misses++;
		shrink(a);
	}
	if (a->have_prev && covered && was != PF_PAT_NONE && against(a, off))
		return;	/* a seek back into what is held: the pattern goes on */
	if (a->have_prev)
		learn(a, off, len);
	a->have_prev = 1;
	a->prev_off = off;
	a->prev_len = len;
	/* A sequential or forward-strided reader is done with what it read
	 * past (a dense forward one may still seek back into it). */
	if (a->pat == PF_PAT_SEQUENTIAL || (a->pat == PF_PAT_STRIDED && a->stride > 0)) {
		for (unsigned i = 0; i < a->nheld;) {
			if (a->held[i].used && end_of(&a->held[i]) <= off)
				drop(a, i);
			else
				i++;
		}
	}
	if (a->pat == PF_PAT_NONE)
		return;

	uint64_t unit = a->pat == PF_PAT_FORWARD ? a->sum_step / a->forward : len;
	uint64_t most = a->budget / 2 / (unit ? unit : 1);
	unsigned win = a->win < most ? a->win : most ? (unsigned)most : 1;
	if (a->pat != PF_PAT_STRIDED) {
		uint64_t from = off + len;
		uint64_t to = from + (uint64_t)win * unit < hi ? from + (uint64_t)win * unit : hi;
		/* the next bytes held and at most half the window missing: later */
		if (from < to && !(holding(a, from) && 2 * missing(a, from, to) < to - from))
			fetch_span(a, from, to, off, off + len);
		return;
	}
	/* The stride's next reads, as ranges: those with gaps of at most a
	 * quarter of a read between them joined (either direction). */
	struct pf_extent span[PF_ADAPT_WIN];
	unsigned n = 0;
	uint64_t want = 0, lack = 0, first_lack = 0;
	for (unsigned k = 1; k <= win; k++) {
		int64_t p = (int64_t)off + (int64_t)k * a->stride;
		if (p < (int64_t)lo || (uint64_t)p >= hi)
			break;
		uint64_t s = (uint64_t)p, e = s + len < hi ? s + len : hi;
		uint64_t m = missing(a, s, e);
		want += e - s;
		lack += m;
		first_lack = k == 1 ? m : first_lack;
		struct pf_extent *last = n ? &span[n - 1] : NULL;
		if (last && 4 * s <= 4 * (last->off + last->len) + len &&
		    4 * e + len >= 4 * last->off) {
			uint64_t s2 = s < last->off ? s : last->off;
			uint64_t e2 = e > last->off + last->len ? e : last->off + last->len;
			*last = (struct pf_extent){s2, e2 - s2};
		} else {
			span[n++] = (struct pf_extent){s, e - s};
		}
	}
	/* the next read held and at most half the window missing: later */
	if (!n || (!first_lack && 2 * lack < want))
		return;
	for (unsigned i = 0; i < n; i++)
		if (!fetch_span(a, span[i].off, span[i].off + span[i].len, off, off + len))
			break;
}

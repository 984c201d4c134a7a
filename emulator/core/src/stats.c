/* SPDX-License-Identifier: MIT */
/*
 * Per-process shim counters (stats.h).
 *
 * Relaxed atomics suffice: each counter is independent and is only read
 * as a whole at close, after the threads that update it have quiesced.
 * A struct with a single writer is updated by relaxed load and store, which
 * on x86 are plain moves.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#include "lgp/stats.h"

/* Names are the JSON keys the runner reads; keep them in enum order. */
static const char *const stats_names[LGP_STAT_COUNT] = {
	[LGP_STAT_MSGS] = "msgs",
	[LGP_STAT_BYTES] = "bytes",
	[LGP_STAT_SEND_OVERHEAD_NS] = "send_overhead_ns",
	[LGP_STAT_RECV_OVERHEAD_NS] = "recv_overhead_ns",
	[LGP_STAT_RECV_MSGS] = "recv_msgs",
	[LGP_STAT_GAP_NS] = "gap_ns",
	[LGP_STAT_BULK_GAP_NS] = "bulk_gap_ns",
	[LGP_STAT_LATENCY_NS] = "latency_ns",
	[LGP_STAT_MAX_QUEUE_DEPTH] = "max_queue_depth",
	[LGP_STAT_EAGAIN] = "eagain",
	[LGP_STAT_POST_ERRORS] = "post_errors",
	[LGP_STAT_RELEASES] = "releases",
	[LGP_STAT_LATE_NS] = "late_ns",
	[LGP_STAT_LATE_MAX_NS] = "late_max_ns",
	[LGP_STAT_LATE_OVER] = "late_over_10us",
	[LGP_STAT_EARLY] = "early_releases",
};

/* An snprintf-like writer that counts what it could not store. */
struct stats_out {
	char *buf;
	size_t len;
	size_t pos;
};

static void stats_putc(struct stats_out *o, char c)
{
	if (o->pos + 1 < o->len)
		o->buf[o->pos] = c;
	o->pos++;
}

static void stats_puts(struct stats_out *o, const char *s)
{
	while (*s)
		stats_putc(o, *s++);
}

static void stats_put_u64(struct stats_out *o, uint64_t v)
{
	char num[24];

	snprintf(num, sizeof(num), "%" PRIu64, v);
	stats_puts(o, num);
}

/* A histogram's counts after its key: "<key>[c0,c1,...]". */
static void stats_put_counts(struct stats_out *o, const char *key,
			     const uint64_t *counts, unsigned int n)
{
	unsigned int i;

	stats_puts(o, key);
	for (i = 0; i < n; i++) {
		if (i)
			stats_putc(o, ',');
		stats_put_u64(o, __atomic_load_n(&counts[i], __ATOMIC_RELAXED));
	}
	stats_putc(o, ']');
}

/* A JSON string literal; provider names are plain, but stay valid JSON. */
static void stats_put_string(struct stats_out *o, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char c;

	stats_putc(o, '"');
	for (; *s; s++) {
		c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			stats_putc(o, '\\');
			stats_putc(o, (char)c);
		} else if (c < 0x20) {
			stats_puts(o, "\\u00");
			stats_putc(o, hex[c >> 4]);
			stats_putc(o, hex[c & 0xf]);
		} else {
			stats_putc(o, (char)c);
		}
	}
	stats_putc(o, '"');
}

const char *lgp_stat_name(enum lgp_stat stat)
{
	return (unsigned int)stat < LGP_STAT_COUNT ? stats_names[stat] : NULL;
}

void lgp_stats_add(struct lgp_stats *s, enum lgp_stat stat, uint64_t delta)
{
	__atomic_fetch_add(&s->v[stat], delta, __ATOMIC_RELAXED);
}

void lgp_stats_max(struct lgp_stats *s, enum lgp_stat stat, uint64_t value)
{
	uint64_t cur = __atomic_load_n(&s->v[stat], __ATOMIC_RELAXED);

	while (cur < value &&
	       !__atomic_compare_exchange_n(&s->v[stat], &cur, value, 1,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

uint64_t lgp_stats_get(const struct lgp_stats *s, enum lgp_stat stat)
{
	return __atomic_load_n(&s->v[stat], __ATOMIC_RELAXED);
}

unsigned int lgp_late_bucket(uint64_t late_ns)
{
	uint64_t us = late_ns / 1000;
	unsigned int k;

	if (!us)
		return 0;
	k = 64 - (unsigned int)__builtin_clzll(us);	/* us in [2^(k-1), 2^k) */
	return k < LGP_LATE_BUCKETS - 1 ? k : LGP_LATE_BUCKETS - 1;
}

uint64_t lgp_late_bucket_bound_ns(unsigned int k)
{
	return k < LGP_LATE_BUCKETS - 1 ? (1000ULL << k) : UINT64_MAX;
}

static inline void stats_count(uint64_t *c, uint64_t delta, bool owned)
{
	if (owned)
		__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + delta,
				 __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(c, delta, __ATOMIC_RELAXED);
}

/*
 * The one account of a release; owned is a constant at both call sites, so
 * each gets its own code without a branch on it.
 */
static inline void stats_release(struct lgp_stats *s, uint64_t due_ns,
				 uint64_t now_ns, bool owned)
{
	uint64_t late;

	stats_count(&s->v[LGP_STAT_RELEASES], 1, owned);
	if (now_ns < due_ns) {
		stats_count(&s->v[LGP_STAT_EARLY], 1, owned);
		return;
	}
	late = now_ns - due_ns;
	stats_count(&s->v[LGP_STAT_LATE_NS], late, owned);
	if (owned) {
		if (late > lgp_stats_get(s, LGP_STAT_LATE_MAX_NS))
			__atomic_store_n(&s->v[LGP_STAT_LATE_MAX_NS], late,
					 __ATOMIC_RELAXED);
	} else {
		lgp_stats_max(s, LGP_STAT_LATE_MAX_NS, late);
	}
	if (late > LGP_LATE_OVER_NS)
		stats_count(&s->v[LGP_STAT_LATE_OVER], 1, owned);
	stats_count(&s->late_hist[lgp_late_bucket(late)], 1, owned);
}

void lgp_stats_release(struct lgp_stats *s, uint64_t due_ns, uint64_t now_ns)
{
	stats_release(s, due_ns, now_ns, false);
}

void lgp_stats_release_owned(struct lgp_stats *s, uint64_t due_ns,
			     uint64_t now_ns)
{
	stats_release(s, due_ns, now_ns, true);
}

void lgp_stats_delay_init(struct lgp_stats *s, uint64_t max_ns)
{
	s->delay_bucket_ns = max_ns / (LGP_DELAY_BUCKETS - 1) + 1;
}

void lgp_stats_delay(struct lgp_stats *s, uint64_t delay_ns)
{
	uint64_t k;

	if (!s->delay_bucket_ns)
		return;
	k = delay_ns / s->delay_bucket_ns;
	if (k > LGP_DELAY_BUCKETS - 1)
		k = LGP_DELAY_BUCKETS - 1;
	__atomic_fetch_add(&s->delay_hist[k], 1, __ATOMIC_RELAXED);
}

int lgp_stats_json(const struct lgp_stats *s, const char *provider,
		   char *buf, size_t len)
{
	struct stats_out o = { buf, len, 0 };
	int i;

	stats_puts(&o, "{\"pid\":");
	stats_put_u64(&o, (uint64_t)getpid());
	stats_puts(&o, ",\"provider\":");
	if (provider)
		stats_put_string(&o, provider);
	else
		stats_puts(&o, "null");
	for (i = 0; i < LGP_STAT_COUNT; i++) {
		stats_puts(&o, ",\"");
		stats_puts(&o, stats_names[i]);
		stats_puts(&o, "\":");
		stats_put_u64(&o, lgp_stats_get(s, i));
	}
	stats_put_counts(&o, ",\"late_hist_us\":[", s->late_hist,
			 LGP_LATE_BUCKETS);
	if (s->delay_bucket_ns) {
		stats_puts(&o, ",\"delay_bucket_ns\":");
		stats_put_u64(&o, s->delay_bucket_ns);
		stats_put_counts(&o, ",\"delay_hist\":[", s->delay_hist,
				 LGP_DELAY_BUCKETS);
	}
	stats_putc(&o, '}');
	if (len)
		buf[o.pos < len ? o.pos : len - 1] = '\0';
	return (int)o.pos;
}

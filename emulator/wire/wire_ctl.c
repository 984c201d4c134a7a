/* SPDX-License-Identifier: MIT */
/* Control requests, JSON documents and Prometheus metrics (see wire_ctl.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "wire_ctl.h"

#define WIRE_CTL_ERRLEN	512

static void wire_ctl_error(struct wire_buf *out, const char *msg)
{
	wire_buf_reset(out);
	wire_buf_printf(out, "{\"ok\":false,\"error\":");
	wire_buf_json_str(out, msg);
	wire_buf_printf(out, "}");
}

static void wire_ctl_port_config(struct wire_state *st, unsigned int i,
				 struct wire_buf *b)
{
	struct wire_shape s;

	wire_state_get(&st->ports[i], &s);
	wire_buf_printf(b, "{\"port\":%u,\"name\":", i);
	wire_buf_json_str(b, st->ports[i].name);
	wire_buf_printf(b, ",\"latency_ns\":%" PRIu64 ",\"jitter_ns\":%" PRIu64
			",\"gap_ns\":%" PRIu64 ",\"bulk_gap_fs\":%" PRIu64
			",\"burst_bytes\":%" PRIu64 ",\"queue_pkts\":%" PRIu64
			",\"queue_bytes\":%" PRIu64 ",\"queue_capacity\":%u"
			",\"loss\":",
			s.latency_ns, s.jitter_ns, s.gap_ns, s.bulk_gap_fs,
			s.burst_bytes, s.queue_pkts, s.queue_bytes,
			st->ports[i].capacity);
	wire_buf_json_double(b, s.loss);
	wire_buf_printf(b, "}");
}

void wire_ctl_config_json(struct wire_state *st, struct wire_buf *b)
{
	unsigned int i;

	wire_buf_printf(b, "[");
	for (i = 0; i < st->nports; i++) {
		if (i)
			wire_buf_printf(b, ",");
		wire_ctl_port_config(st, i, b);
	}
	wire_buf_printf(b, "]");
}

/*
 * The port's lateness, and its drawn delays if any, under the names of the
 * fabric shim's stats line.
 */
static void wire_ctl_late_json(const struct lgp_stats *late, struct wire_buf *b)
{
	unsigned int k;
	int i;

	for (i = LGP_STAT_LATE_FIRST; i <= LGP_STAT_LATE_LAST; i++)
		wire_buf_printf(b, ",\"%s\":%" PRIu64, lgp_stat_name(i),
				lgp_stats_get(late, i));
	wire_buf_printf(b, ",\"late_hist_us\":[");
	for (k = 0; k < LGP_LATE_BUCKETS; k++)
		wire_buf_printf(b, "%s%" PRIu64, k ? "," : "",
				late->late_hist[k]);
	wire_buf_printf(b, "]");
	if (!late->delay_bucket_ns)
		return;
	/* the delays drawn from the distribution (wire_egress_set_dist()) */
	wire_buf_printf(b, ",\"delay_bucket_ns\":%" PRIu64 ",\"delay_hist\":[",
			late->delay_bucket_ns);
	for (k = 0; k < LGP_DELAY_BUCKETS; k++)
		wire_buf_printf(b, "%s%" PRIu64, k ? "," : "",
				late->delay_hist[k]);
	wire_buf_printf(b, "]");
}

/*
 * Per source port: what arrived here under pairs, and their latency; shown
 * while the wire has pairs.
 */
static void wire_ctl_pair_counts(const struct wire_port *p, unsigned int n,
				 struct wire_buf *b)
{
	unsigned int k;

	wire_buf_printf(b, ",\"pair_pkts\":[");
	for (k = 0; k < n; k++)
		wire_buf_printf(b, "%s%" PRIu64, k ? "," : "",
				__atomic_load_n(&p->pair_pkts[k], __ATOMIC_RELAXED));
	wire_buf_printf(b, "],\"pair_latency_ns\":[");
	for (k = 0; k < n; k++)
		wire_buf_printf(b, "%s%" PRIu64, k ? "," : "",
				__atomic_load_n(&p->pair_latency_ns[k],
						__ATOMIC_RELAXED));
	wire_buf_printf(b, "]");
}

void wire_ctl_stats_json(struct wire_state *st, struct wire_buf *b)
{
	static const char *const bins[WIRE_HIST_BINS] = {
		"le_1", "le_10", "le_100", "le_1000", "le_10000", "inf"
	};
	struct wire_stats s;
	uint64_t cum;
	unsigned int i, k;

	wire_buf_printf(b, "[");
	for (i = 0; i < st->nports; i++) {
		wire_stats_read(&st->ports[i].stats, &s);
		wire_buf_printf(b, "%s{\"port\":%u,\"name\":", i ? "," : "", i);
		wire_buf_json_str(b, st->ports[i].name);
		wire_buf_printf(b, ",\"rx_pkts\":%" PRIu64 ",\"rx_bytes\":%" PRIu64
				",\"tx_pkts\":%" PRIu64 ",\"tx_bytes\":%" PRIu64
				",\"drops\":{\"queue\":%" PRIu64 ",\"loss\":%"
				PRIu64 ",\"tx\":%" PRIu64 ",\"rx\":%" PRIu64 "}"
				",\"queue_depth_pkts\":%" PRIu64
				",\"queue_depth_bytes\":%" PRIu64
				",\"queue_depth_max\":%" PRIu64
				",\"delay_sum_ns\":%" PRIu64 ",\"delay_hist_us\":{",
				s.rx_pkts, s.rx_bytes, s.tx_pkts, s.tx_bytes,
				s.drop_queue, s.drop_loss, s.drop_tx, s.drop_rx,
				s.queue_pkts, s.queue_bytes, s.queue_max,
				s.delay_sum_ns);
		/* cumulative, like Prometheus buckets: le_10 counts <= 10 us */
		for (cum = 0, k = 0; k < WIRE_HIST_BINS; k++) {
			cum += s.hist[k];
			wire_buf_printf(b, "%s\"%s\":%" PRIu64, k ? "," : "",
					bins[k], cum);
		}
		wire_buf_printf(b, "}");
		wire_ctl_late_json(&s.late, b);
		if (s.late.delay_bucket_ns)
			wire_buf_printf(b, ",\"delay_latency_ns\":%" PRIu64
					",\"delay_starts\":%" PRIu64,
					s.delay_latency_ns, s.delay_starts);
		if (atomic_load_explicit(&st->pairs, memory_order_relaxed))
			wire_ctl_pair_counts(&st->ports[i], st->nports, b);
		wire_buf_printf(b, "}");
	}
	wire_buf_printf(b, "]");
}

void wire_ctl_totals_json(struct wire_state *st, struct wire_buf *b)
{
	wire_buf_printf(b, "{\"mode\":\"%s\",\"ports\":",
			wire_mode_name(st->mode));
	wire_ctl_stats_json(st, b);
	wire_buf_printf(b, "}");
}

/* A value's JSON type, for messages (objects and arrays never get here). */
static const char *wire_ctl_type(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_STRING: return "a string";
	case JSON_INTEGER:
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

/*
 * A number as JSON text, which the knob parsers take: they decide integer
 * or real, and a real keeps its point ("1.0"), so an integer knob refuses
 * it as it did the request's own text.
 */
static void wire_ctl_num(const json_t *v, char *buf, size_t len)
{
	size_t n = json_dumpb(v, buf, len - 1, JSON_ENCODE_ANY);

	buf[n < len ? n : len - 1] = '\0';
}

/* Parse "port": an integer index of an existing port. */
static int wire_ctl_port(struct wire_state *st, const json_t *v,
			 unsigned int *port, char *err, size_t errlen)
{
	char text[64], *end;
	long long n;

	if (!json_is_number(v)) {
		snprintf(err, errlen, "port must be an integer from 0 to %u, "
			 "not %s", st->nports - 1, wire_ctl_type(v));
		return -EINVAL;
	}
	wire_ctl_num(v, text, sizeof(text));
	errno = 0;
	n = strtoll(text, &end, 10);
	if (*end || errno || n < 0 || n >= (long long)st->nports) {
		snprintf(err, errlen, "port %s out of range: this wire has "
			 "ports 0 to %u", text, st->nports - 1);
		return -EINVAL;
	}
	*port = (unsigned int)n;
	return 0;
}

/* Apply one knob member to s; checks the JSON type of the value first. */
static int wire_ctl_knob(const char *key, const json_t *v, int k,
			 struct wire_shape *s, char *err, size_t errlen)
{
	enum wire_knob_kind kind = wire_knob_kind(k);
	char text[64];

	if (kind == WIRE_KIND_UNIT) {
		if (!json_is_string(v)) {
			snprintf(err, errlen, "%s must be a string with a unit, "
				 "e.g. \"%s\", not %s", key,
				 k == WIRE_KNOB_BANDWIDTH ? "100Mbit/s" :
				 k == WIRE_KNOB_BULK_GAP ? "0.08ns/B" : "1ms",
				 wire_ctl_type(v));
			return -EINVAL;
		}
		return wire_shape_parse(s, k, key, json_string_value(v), err,
					errlen);
	}
	if (!json_is_number(v)) {
		snprintf(err, errlen, "%s must be a JSON number, e.g. %s, not %s",
			 key, kind == WIRE_KIND_PROB ? "0.01" : "8192",
			 wire_ctl_type(v));
		return -EINVAL;
	}
	wire_ctl_num(v, text, sizeof(text));
	return wire_shape_parse(s, k, key, text, err, errlen);
}

static void wire_ctl_set(struct wire_state *st, json_t *o,
			 struct wire_buf *out)
{
	struct wire_shape s[1];
	char err[WIRE_CTL_ERRLEN];
	unsigned int port = 0, first, last, i, given = 0;
	const char *key;
	json_t *v;
	int all = 1, k;

	v = json_object_get(o, "port");
	if (v) {
		if (wire_ctl_port(st, v, &port, err, sizeof(err)))
			goto err;
		all = 0;
	}
	json_object_foreach(o, key, v) {
		k = wire_knob_by_key(key);
		if (k >= 0)
			given |= WIRE_KNOB_BIT(k);
	}
	if (wire_shape_conflict(given, 0, err, sizeof(err)))
		goto err;
	json_object_foreach(o, key, v) {
		if (!strcmp(key, "cmd") || !strcmp(key, "port"))
			continue;
		if (wire_knob_by_key(key) < 0) {
			snprintf(err, sizeof(err), "unknown key '%.40s' for set: "
				 "expected port, %s", key, wire_knob_keys());
			goto err;
		}
	}
	first = all ? 0 : port;
	last = all ? st->nports - 1 : port;
	/* Validate against every target port before changing any. */
	for (i = first; i <= last; i++) {
		wire_state_get(&st->ports[i], s);
		json_object_foreach(o, key, v) {
			k = wire_knob_by_key(key);
			if (k >= 0 && wire_ctl_knob(key, v, k, s, err,
						    sizeof(err)))
				goto err;
		}
		if (s->queue_pkts > st->ports[i].capacity) {
			snprintf(err, sizeof(err), "queue_pkts %" PRIu64
				 " exceeds the delay line of port %u: at most "
				 "%u (fixed at start by --queue-pkts or "
				 "--queue-capacity)", s->queue_pkts, i,
				 st->ports[i].capacity);
			goto err;
		}
	}
	for (i = first; i <= last; i++) {
		wire_state_get(&st->ports[i], s);
		json_object_foreach(o, key, v) {
			k = wire_knob_by_key(key);
			if (k >= 0)
				wire_ctl_knob(key, v, k, s, err, sizeof(err));
		}
		if (wire_state_publish(st, i, s)) {
			snprintf(err, sizeof(err), "out of memory applying set "
				 "to port %u", i);
			goto err;
		}
	}
	wire_buf_printf(out, "{\"ok\":true,\"ports\":[");
	for (i = first; i <= last; i++) {
		if (i != first)
			wire_buf_printf(out, ",");
		wire_ctl_port_config(st, i, out);
	}
	wire_buf_printf(out, "]}");
	return;
err:
	wire_ctl_error(out, err);
}

/* The distribution's keys as "get" and "dist" report them. */
static void wire_ctl_dist_json(struct wire_state *st, struct wire_buf *b)
{
	/* the control thread is the only writer: its own load needs no order */
	const struct wire_dist *d = atomic_load_explicit(&st->dist,
							 memory_order_relaxed);

	wire_buf_printf(b, ",\"latency_dist\":");
	wire_buf_json_str(b, d && d->spec[0] ? d->spec : "constant");
	wire_buf_printf(b, ",\"latency_corr\":");
	if (d && d->corr[0])
		wire_buf_json_str(b, d->corr);
	else
		wire_buf_printf(b, "null");
	wire_buf_printf(b, ",\"seed\":%" PRIu64, d ? d->seed : 1);
}

/* A setting's text: a JSON string as it is, the seed also as an integer. */
static int wire_ctl_dist_text(const char *key, json_t *v, char *text,
			      size_t len, const char **out, char *err,
			      size_t errlen)
{
	if (json_is_string(v)) {
		*out = json_string_value(v);
		return 0;
	}
	if (!strcmp(key, "seed") && json_is_integer(v) &&
	    json_integer_value(v) >= 0) {
		snprintf(text, len, "%" JSON_INTEGER_FORMAT,
			 json_integer_value(v));
		*out = text;
		return 0;
	}
	snprintf(err, errlen, "%s must be a JSON string%s, not %s", key,
		 strcmp(key, "seed") ? ", e.g. \"normal:20us\"" :
		 " or a whole number", wire_ctl_type(v));
	return -EINVAL;
}

/*
 * {"cmd":"dist","latency_dist":..,"latency_corr":..,"seed":..}: the
 * distribution of every port from now on, the keys left out as unset
 * (constant, no correlation, seed 1); all or nothing.
 */
static void wire_ctl_dist(struct wire_state *st, json_t *o,
			  struct wire_buf *out)
{
	static const char *const keys[3] = { "latency_dist", "latency_corr",
					     "seed" };
	const char *text[3] = { NULL, NULL, NULL };
	char err[WIRE_CTL_ERRLEN], seed[32];
	struct wire_dist *d;
	const char *key;
	unsigned int i;
	json_t *v;
	int rc;

	json_object_foreach(o, key, v) {
		if (!strcmp(key, "cmd"))
			continue;
		for (i = 0; i < 3 && strcmp(key, keys[i]); i++)
			;
		if (i == 3) {
			snprintf(err, sizeof(err), "unknown key '%.40s' for "
				 "dist: expected latency_dist, latency_corr, "
				 "seed", key);
			goto err;
		}
		if (wire_ctl_dist_text(key, v, seed, sizeof(seed), &text[i],
				       err, sizeof(err)))
			goto err;
	}
	d = wire_dist_new(text[0], text[1], text[2], WIRE_DIST_KEYS, &rc, err,
			  sizeof(err));
	if (!d)
		goto err;
	wire_state_publish_dist(st, d);
	wire_buf_printf(out, "{\"ok\":true");
	wire_ctl_dist_json(st, out);
	wire_buf_printf(out, "}");
	return;
err:
	wire_ctl_error(out, err);
}

/* How many pairs add something, as "get" and "pairs" report it. */
static void wire_ctl_pairs_json(struct wire_state *st, struct wire_buf *b)
{
	/* the control thread is the only writer: its own load needs no order */
	const struct wire_pairs *p = atomic_load_explicit(&st->pairs,
							  memory_order_relaxed);

	wire_buf_printf(b, ",\"pairs\":%u", p ? p->count : 0);
}

/*
 * {"cmd":"pairs","table":"ranks N\nSRC DST LATENCY_NS GAP_NS
 * BULK_GAP_FS\n..."}: the network's per-pair delays from now on (an empty
 * table: none); all or nothing.
 */
static void wire_ctl_pairs(struct wire_state *st, json_t *o,
			   struct wire_buf *out)
{
	char err[WIRE_CTL_ERRLEN];
	const char *key, *table = NULL;
	struct wire_pairs *p = NULL;
	json_t *v;
	int rc;

	json_object_foreach(o, key, v) {
		if (!strcmp(key, "cmd"))
			continue;
		if (strcmp(key, "table")) {
			snprintf(err, sizeof(err), "unknown key '%.40s' for "
				 "pairs: expected table", key);
			goto err;
		}
		if (!json_is_string(v)) {
			snprintf(err, sizeof(err), "table must be a JSON string "
				 "of lines, e.g. \"ranks 2\\n0 1 50000 0 0\", "
				 "not %s", wire_ctl_type(v));
			goto err;
		}
		table = json_string_value(v);
	}
	if (!table) {
		snprintf(err, sizeof(err), "missing table for pairs: expected "
			 "{\"cmd\":\"pairs\",\"table\":\"ranks N\\n...\"}, "
			 "\"\" for none");
		goto err;
	}
	if (*table) {
		p = wire_pairs_new(table, st->nports, &rc, err, sizeof(err));
		if (!p)
			goto err;
	}
	wire_state_publish_pairs(st, p);
	wire_buf_printf(out, "{\"ok\":true");
	wire_ctl_pairs_json(st, out);
	wire_buf_printf(out, "}");
	return;
err:
	wire_ctl_error(out, err);
}

static int wire_ctl_only_cmd(json_t *o, const char *cmd, char *err,
			     size_t errlen)
{
	const char *key;
	json_t *v;

	json_object_foreach(o, key, v) {
		if (strcmp(key, "cmd")) {
			snprintf(err, errlen, "unknown key '%.40s' for %s: it "
				 "takes no other keys", key, cmd);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * One flat object: jansson parses (and rejects duplicate keys, a guess at
 * which one wins); nested values are refused here, as no request has one.
 */
static json_t *wire_ctl_parse(const char *line, size_t len, char *err,
			      size_t errlen)
{
	json_error_t jerr;
	const char *key;
	json_t *o, *v;

	o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!o) {
		snprintf(err, errlen, "request is not a flat JSON object: %s "
			 "at byte %d", jerr.text, jerr.position);
		return NULL;
	}
	if (!json_is_object(o)) {
		snprintf(err, errlen, "request is not a flat JSON object: "
			 "expected '{' at byte 0");
		goto err;
	}
	json_object_foreach(o, key, v) {
		if (json_is_object(v) || json_is_array(v)) {
			snprintf(err, errlen, "request is not a flat JSON "
				 "object: nested objects and arrays are not "
				 "accepted ('%.40s')", key);
			goto err;
		}
	}
	return o;
err:
	json_decref(o);
	return NULL;
}

void wire_ctl_handle(struct wire_state *st, const char *line, size_t len,
		     struct wire_buf *out)
{
	const char *cmd;
	char err[WIRE_CTL_ERRLEN];
	json_t *o;

	wire_buf_reset(out);
	o = wire_ctl_parse(line, len, err, sizeof(err));
	if (!o)
		goto err;
	cmd = json_string_value(json_object_get(o, "cmd"));
	if (!cmd) {
		snprintf(err, sizeof(err), "missing \"cmd\": expected "
			 "{\"cmd\":\"set\"|\"get\"|\"dist\"|\"pairs\"|\"stats\", ...}");
		goto err;
	}
	if (!strcmp(cmd, "set")) {
		wire_ctl_set(st, o, out);
	} else if (!strcmp(cmd, "get")) {
		if (wire_ctl_only_cmd(o, "get", err, sizeof(err)))
			goto err;
		wire_buf_printf(out, "{\"ok\":true,\"mode\":\"%s\"",
				wire_mode_name(st->mode));
		wire_ctl_dist_json(st, out);
		wire_ctl_pairs_json(st, out);
		wire_buf_printf(out, ",\"ports\":");
		wire_ctl_config_json(st, out);
		wire_buf_printf(out, "}");
	} else if (!strcmp(cmd, "dist")) {
		wire_ctl_dist(st, o, out);
	} else if (!strcmp(cmd, "pairs")) {
		wire_ctl_pairs(st, o, out);
	} else if (!strcmp(cmd, "stats")) {
		if (wire_ctl_only_cmd(o, "stats", err, sizeof(err)))
			goto err;
		wire_buf_printf(out, "{\"ok\":true,\"ports\":");
		wire_ctl_stats_json(st, out);
		wire_buf_printf(out, "}");
	} else {
		snprintf(err, sizeof(err), "unknown cmd '%.40s': expected set, "
			 "get, dist, pairs or stats", cmd);
		goto err;
	}
	json_decref(o);
	if (wire_buf_failed(out))
		wire_ctl_error(out, "out of memory");
	return;
err:
	json_decref(o);
	wire_ctl_error(out, err);
}

static void wire_prom_head(struct wire_buf *b, const char *name,
			   const char *type, const char *help)
{
	wire_buf_printf(b, "# HELP loggp_wire_%s %s\n# TYPE loggp_wire_%s %s\n",
			name, help, name, type);
}

#define WIRE_PROM_PORTS(b, st, name, type, help, fmt, expr)		\
	do {								\
		wire_prom_head(b, name, type, help);			\
		for (i = 0; i < (st)->nports; i++) {			\
			wire_stats_read(&(st)->ports[i].stats, &s);	\
			wire_state_get(&(st)->ports[i], &sh);		\
			wire_buf_printf(b, "loggp_wire_" name		\
					"{port=\"%u\"} " fmt "\n", i, expr); \
		}							\
	} while (0)

static double wire_prom_delay_le(unsigned int k)
{
	return (double)wire_hist_le_us[k] * 1e-6;
}

static double wire_prom_late_le(unsigned int k)
{
	return (double)lgp_late_bucket_bound_ns(k) * 1e-9;
}

/*
 * One port's series of histogram name from per-bucket counts: cumulative
 * buckets with le(k) in seconds, the last one +Inf, then _sum and _count.
 */
static void wire_prom_hist(struct wire_buf *b, const char *name,
			   unsigned int port, const uint64_t *counts,
			   unsigned int nbins, double (*le)(unsigned int k),
			   double sum_s)
{
	uint64_t cum = 0;
	unsigned int k;

	for (k = 0; k < nbins; k++) {
		cum += counts[k];
		if (k < nbins - 1)
			wire_buf_printf(b, "loggp_wire_%s_bucket{port=\"%u\","
					"le=\"%g\"} %" PRIu64 "\n", name, port,
					le(k), cum);
		else
			wire_buf_printf(b, "loggp_wire_%s_bucket{port=\"%u\","
					"le=\"+Inf\"} %" PRIu64 "\n", name,
					port, cum);
	}
	wire_buf_printf(b, "loggp_wire_%s_sum{port=\"%u\"} %.9f\n", name, port,
			sum_s);
	wire_buf_printf(b, "loggp_wire_%s_count{port=\"%u\"} %" PRIu64 "\n",
			name, port, cum);
}

void wire_ctl_metrics(struct wire_state *st, struct wire_buf *b)
{
	static const char *const causes[] = { "queue", "loss", "tx", "rx" };
	struct wire_shape sh;
	struct wire_stats s;
	unsigned int i, c;

	WIRE_PROM_PORTS(b, st, "rx_packets_total", "counter",
			"Packets received on the port (from its host).",
			"%" PRIu64, s.rx_pkts);
	WIRE_PROM_PORTS(b, st, "rx_bytes_total", "counter",
			"Frame bytes (Ethernet header + payload) received.",
			"%" PRIu64, s.rx_bytes);
	WIRE_PROM_PORTS(b, st, "tx_packets_total", "counter",
			"Packets sent out of the port (to its host).",
			"%" PRIu64, s.tx_pkts);
	WIRE_PROM_PORTS(b, st, "tx_bytes_total", "counter",
			"Frame bytes (Ethernet header + payload) sent.",
			"%" PRIu64, s.tx_bytes);
	wire_prom_head(b, "drops_total", "counter",
		       "Packets dropped, by cause: queue/loss/tx at the port's "
		       "egress, rx in its RX ring.");
	for (i = 0; i < st->nports; i++) {
		uint64_t v[4];

		wire_stats_read(&st->ports[i].stats, &s);
		v[0] = s.drop_queue;
		v[1] = s.drop_loss;
		v[2] = s.drop_tx;
		v[3] = s.drop_rx;
		for (c = 0; c < 4; c++)
			wire_buf_printf(b, "loggp_wire_drops_total{port=\"%u\","
					"cause=\"%s\"} %" PRIu64 "\n", i,
					causes[c], v[c]);
	}
	WIRE_PROM_PORTS(b, st, "queue_depth_packets", "gauge",
			"Packets in the port's delay line.",
			"%" PRIu64, s.queue_pkts);
	WIRE_PROM_PORTS(b, st, "queue_depth_bytes", "gauge",
			"Bytes in the port's delay line.",
			"%" PRIu64, s.queue_bytes);
	WIRE_PROM_PORTS(b, st, "queue_depth_max_packets", "gauge",
			"Deepest the port's delay line has been.",
			"%" PRIu64, s.queue_max);
	wire_prom_head(b, "added_delay_seconds", "histogram",
		       "Time packets spent in the wire (arrival to send).");
	for (i = 0; i < st->nports; i++) {
		wire_stats_read(&st->ports[i].stats, &s);
		wire_prom_hist(b, "added_delay_seconds", i, s.hist,
			       WIRE_HIST_BINS, wire_prom_delay_le,
			       (double)s.delay_sum_ns * 1e-9);
	}
	wire_prom_head(b, "release_late_seconds", "histogram",
		       "How late delayed packets left the delay line after "
		       "their release time (bounds exclusive).");
	for (i = 0; i < st->nports; i++) {
		wire_stats_read(&st->ports[i].stats, &s);
		wire_prom_hist(b, "release_late_seconds", i, s.late.late_hist,
			       LGP_LATE_BUCKETS, wire_prom_late_le,
			       (double)lgp_stats_get(&s.late, LGP_STAT_LATE_NS) *
			       1e-9);
	}
	WIRE_PROM_PORTS(b, st, "release_late_max_seconds", "gauge",
			"Latest a delayed packet has left the delay line.",
			"%.9f", (double)lgp_stats_get(&s.late,
						      LGP_STAT_LATE_MAX_NS) * 1e-9);
	WIRE_PROM_PORTS(b, st, "release_late_over_10us_total", "counter",
			"Delayed packets that left more than 10 us late.",
			"%" PRIu64, lgp_stats_get(&s.late, LGP_STAT_LATE_OVER));
	WIRE_PROM_PORTS(b, st, "early_releases_total", "counter",
			"Delayed packets that left before their release time "
			"(a bug if not 0).",
			"%" PRIu64, lgp_stats_get(&s.late, LGP_STAT_EARLY));
	WIRE_PROM_PORTS(b, st, "latency_seconds", "gauge",
			"Configured added latency of the port's egress.",
			"%.9f", (double)sh.latency_ns * 1e-9);
	WIRE_PROM_PORTS(b, st, "jitter_seconds", "gauge",
			"Configured jitter of the port's egress.",
			"%.9f", (double)sh.jitter_ns * 1e-9);
	WIRE_PROM_PORTS(b, st, "gap_seconds", "gauge",
			"Configured minimum gap between departures.",
			"%.9f", (double)sh.gap_ns * 1e-9);
	WIRE_PROM_PORTS(b, st, "bandwidth_bytes_per_second", "gauge",
			"Configured bandwidth limit of frame bytes (0: none).",
			"%.0f", sh.bulk_gap_fs ? 1e15 / (double)sh.bulk_gap_fs
					       : 0.0);
	WIRE_PROM_PORTS(b, st, "loss_probability", "gauge",
			"Configured random loss probability.", "%g", sh.loss);
	WIRE_PROM_PORTS(b, st, "queue_limit_packets", "gauge",
			"Configured tail-drop limit in packets.",
			"%" PRIu64, sh.queue_pkts);
	WIRE_PROM_PORTS(b, st, "queue_limit_bytes", "gauge",
			"Configured tail-drop limit in bytes.",
			"%" PRIu64, sh.queue_bytes);
}

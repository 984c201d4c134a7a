/* SPDX-License-Identifier: MIT */
/* Application option parsing (see wire_conf.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire_conf.h"

/* Largest delay line: bounded so the mbuf pool stays addressable. */
#define WIRE_MAX_CAPACITY	(1ULL << 20)

const char *wire_conf_usage(void)
{
	return
	"usage: loggp-wire [EAL options] -- [options]\n"
	"  --mode switch|pair      switch: MAC learning over all ports (default);\n"
	"                          pair: ports 0<->1, 2<->3, ...\n"
	"  --control PATH          Unix socket for live control (JSON lines)\n"
	"  --metrics HOST:PORT     Prometheus metrics at http://HOST:PORT/metrics\n"
	"  --stats-json FILE       write the totals JSON here at exit\n"
	"  --latency T --jitter T --gap T      e.g. 100us, 1ms, 0ns\n"
	"  --bandwidth B | --bulk-gap X        e.g. 100Mbit/s | 0.08ns/B\n"
	"  --burst BYTES (65536)   token-bucket depth of the bandwidth limit\n"
	"  --queue-pkts N (8192) --queue-bytes N (16777216)  tail-drop limits\n"
	"  --queue-capacity N      delay line size (max live queue_pkts)\n"
	"  --loss P --seed N       loss probability 0..1, random seed\n"
	"  --latency-dist D        delays drawn around the latency: constant,\n"
	"                          uniform:T, normal:T, pareto:T, paretonormal:T\n"
	"                          or empirical:FILE (as LOGGP_LATENCY_DIST;\n"
	"                          the control socket's dist replaces it)\n"
	"  --latency-corr R        correlation 0..1 of consecutive draws\n"
	"  --jitter-reorder        let jitter and drawn delays reorder packets\n"
	"  --idle-sleep T (20us)   sleep when idle; 0ns = busy poll\n";
}

static const char *const wire_conf_options =
	"--mode, --control, --metrics, --stats-json, --latency, --jitter, "
	"--gap, --bandwidth, --bulk-gap, --burst, --queue-pkts, "
	"--queue-bytes, --queue-capacity, --loss, --seed, --latency-dist, "
	"--latency-corr, --jitter-reorder, --idle-sleep, --help";

static int wire_conf_metrics(struct wire_conf *c, const char *v, char *err,
			     size_t errlen)
{
	const char *colon = strrchr(v, ':');
	uint64_t port;
	size_t hl;

	if (!colon || colon == v ||
	    wire_parse_u64("--metrics port", colon + 1, &port, NULL, 0) ||
	    port > 65535)
		goto err;
	hl = (size_t)(colon - v);
	if (v[0] == '[' && colon[-1] == ']') {	/* [::1]:9477 */
		v++;
		hl -= 2;
	}
	if (!hl || hl >= sizeof(c->metrics_host))
		goto err;
	memcpy(c->metrics_host, v, hl);
	c->metrics_host[hl] = '\0';
	c->metrics_port = (uint16_t)port;
	return 0;
err:
	snprintf(err, errlen, "bad value '%.64s' for --metrics: expected "
		 "HOST:PORT, e.g. 127.0.0.1:9477", v);
	return -EINVAL;
}

int wire_conf_parse(struct wire_conf *c, int argc, char **argv, char *err,
		    size_t errlen)
{
	unsigned int given = 0;
	char seed[24];
	int i, k;
	const char *opt, *val;
	char name[64];
	size_t nl;
	int rc;

	memset(c, 0, sizeof(*c));
	c->mode = WIRE_MODE_SWITCH;
	wire_shape_default(&c->shape);
	c->seed = WIRE_DEF_SEED;
	c->idle_sleep_ns = WIRE_DEF_IDLE_SLEEP_NS;
	err[0] = '\0';

	for (i = 0; i < argc; i++) {
		opt = argv[i];
		val = NULL;
		if (strncmp(opt, "--", 2)) {
			snprintf(err, errlen, "unexpected argument '%.64s': "
				 "expected options, one of %s", opt,
				 wire_conf_options);
			return -EINVAL;
		}
		nl = strcspn(opt, "=");
		if (nl >= sizeof(name))
			nl = sizeof(name) - 1;
		memcpy(name, opt, nl);
		name[nl] = '\0';
		if (opt[nl] == '=')
			val = opt + nl + 1;

		if (!strcmp(name, "--help")) {
			c->help = 1;
			continue;
		}
		if (!strcmp(name, "--jitter-reorder")) {
			if (val) {
				snprintf(err, errlen, "--jitter-reorder takes "
					 "no value");
				return -EINVAL;
			}
			c->jitter_reorder = 1;
			continue;
		}
		k = wire_knob_by_option(name);
		if (k < 0 && strcmp(name, "--mode") &&
		    strcmp(name, "--control") && strcmp(name, "--metrics") &&
		    strcmp(name, "--stats-json") && strcmp(name, "--seed") &&
		    strcmp(name, "--latency-dist") &&
		    strcmp(name, "--latency-corr") &&
		    strcmp(name, "--idle-sleep") &&
		    strcmp(name, "--queue-capacity")) {
			snprintf(err, errlen, "unknown option '%s': expected "
				 "one of %s", name, wire_conf_options);
			return -EINVAL;
		}
		if (!val) {
			if (i + 1 >= argc) {
				snprintf(err, errlen, "missing value for %s",
					 name);
				return -EINVAL;
			}
			val = argv[++i];
		}

		if (k >= 0) {
			rc = wire_shape_parse(&c->shape, k, name, val, err,
					      errlen);
			if (rc)
				return rc;
			given |= WIRE_KNOB_BIT(k);
		} else if (!strcmp(name, "--mode")) {
			if (!strcmp(val, "switch")) {
				c->mode = WIRE_MODE_SWITCH;
			} else if (!strcmp(val, "pair")) {
				c->mode = WIRE_MODE_PAIR;
			} else {
				snprintf(err, errlen, "bad value '%.64s' for "
					 "--mode: expected switch or pair", val);
				return -EINVAL;
			}
		} else if (!strcmp(name, "--control")) {
			if (!*val || strlen(val) >= 108) {
				snprintf(err, errlen, "bad value '%.64s' for "
					 "--control: expected a socket path of "
					 "1 to 107 characters", val);
				return -EINVAL;
			}
			c->control_path = val;
		} else if (!strcmp(name, "--metrics")) {
			rc = wire_conf_metrics(c, val, err, errlen);
			if (rc)
				return rc;
		} else if (!strcmp(name, "--stats-json")) {
			if (!*val) {
				snprintf(err, errlen, "bad value '' for "
					 "--stats-json: expected a file name");
				return -EINVAL;
			}
			c->stats_json = val;
		} else if (!strcmp(name, "--seed")) {
			rc = wire_parse_u64(name, val, &c->seed, err, errlen);
			if (rc)
				return rc;
		} else if (!strcmp(name, "--latency-dist")) {
			c->latency_dist = val;
		} else if (!strcmp(name, "--latency-corr")) {
			c->latency_corr = val;
		} else if (!strcmp(name, "--idle-sleep")) {
			rc = wire_parse_time(name, val, &c->idle_sleep_ns, err,
					     errlen);
			if (rc)
				return rc;
		} else {
			rc = wire_parse_u64(name, val, &c->queue_capacity, err,
					    errlen);
			if (rc)
				return rc;
			if (!c->queue_capacity ||
			    c->queue_capacity > WIRE_MAX_CAPACITY) {
				snprintf(err, errlen, "bad value '%.64s' for "
					 "--queue-capacity: expected 1 to %llu",
					 val, WIRE_MAX_CAPACITY);
				return -EINVAL;
			}
		}
	}
	rc = wire_shape_conflict(given, 1, err, errlen);
	if (rc)
		return rc;
	if (c->shape.queue_pkts > WIRE_MAX_CAPACITY) {
		snprintf(err, errlen, "bad value '%llu' for --queue-pkts: "
			 "expected 1 to %llu",
			 (unsigned long long)c->shape.queue_pkts,
			 WIRE_MAX_CAPACITY);
		return -EINVAL;
	}
	if (!c->queue_capacity)
		c->queue_capacity = c->shape.queue_pkts > WIRE_DEF_QUEUE_PKTS ?
				    c->shape.queue_pkts : WIRE_DEF_QUEUE_PKTS;
	if (c->shape.queue_pkts > c->queue_capacity) {
		snprintf(err, errlen, "--queue-pkts %llu exceeds "
			 "--queue-capacity %llu",
			 (unsigned long long)c->shape.queue_pkts,
			 (unsigned long long)c->queue_capacity);
		return -EINVAL;
	}
	snprintf(seed, sizeof(seed), "%llu", (unsigned long long)c->seed);
	c->dist = wire_dist_new(c->latency_dist, c->latency_corr, seed,
				WIRE_DIST_OPTIONS, &rc, err, errlen);
	return c->dist ? 0 : rc;
}

void wire_conf_fini(struct wire_conf *c)
{
	wire_dist_free(c->dist);
	c->dist = NULL;
}

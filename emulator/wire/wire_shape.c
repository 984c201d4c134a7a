/* SPDX-License-Identifier: MIT */
/* Egress shaping knobs: defaults, names and parsing (see wire_shape.h). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lgp/knob.h>

#include "wire_shape.h"

struct wire_knob_desc {
	const char *key;
	const char *option;
	enum wire_knob_kind kind;
	int lgp;		/* the LogGP knob it is, or -1 (wire only) */
};

static const struct wire_knob_desc wire_knobs[WIRE_KNOB_COUNT] = {
	[WIRE_KNOB_LATENCY] = { "latency", "--latency", WIRE_KIND_UNIT,
				LGP_KNOB_LATENCY },
	[WIRE_KNOB_JITTER] = { "jitter", "--jitter", WIRE_KIND_UNIT, -1 },
	[WIRE_KNOB_GAP] = { "gap", "--gap", WIRE_KIND_UNIT, LGP_KNOB_GAP },
	[WIRE_KNOB_BANDWIDTH] = { "bandwidth", "--bandwidth", WIRE_KIND_UNIT,
				  LGP_KNOB_BANDWIDTH },
	[WIRE_KNOB_BULK_GAP] = { "bulk_gap", "--bulk-gap", WIRE_KIND_UNIT,
				 LGP_KNOB_BULK_GAP },
	[WIRE_KNOB_BURST] = { "burst", "--burst", WIRE_KIND_UINT, -1 },
	[WIRE_KNOB_QUEUE_PKTS] = { "queue_pkts", "--queue-pkts", WIRE_KIND_UINT,
				   -1 },
	[WIRE_KNOB_QUEUE_BYTES] = { "queue_bytes", "--queue-bytes",
				    WIRE_KIND_UINT, -1 },
	[WIRE_KNOB_LOSS] = { "loss", "--loss", WIRE_KIND_PROB, -1 },
};

void wire_shape_default(struct wire_shape *s)
{
	memset(s, 0, sizeof(*s));
	s->burst_bytes = WIRE_DEF_BURST_BYTES;
	s->queue_pkts = WIRE_DEF_QUEUE_PKTS;
	s->queue_bytes = WIRE_DEF_QUEUE_BYTES;
}

static int wire_knob_valid(enum wire_knob k)
{
	return (unsigned int)k < WIRE_KNOB_COUNT;
}

const char *wire_knob_key(enum wire_knob k)
{
	return wire_knob_valid(k) ? wire_knobs[k].key : NULL;
}

const char *wire_knob_option(enum wire_knob k)
{
	return wire_knob_valid(k) ? wire_knobs[k].option : NULL;
}

enum wire_knob_kind wire_knob_kind(enum wire_knob k)
{
	return wire_knobs[k].kind;
}

int wire_knob_by_key(const char *key)
{
	int k;

	for (k = 0; k < WIRE_KNOB_COUNT; k++)
		if (!strcmp(wire_knobs[k].key, key))
			return k;
	return -1;
}

int wire_knob_by_option(const char *opt)
{
	int k;

	for (k = 0; k < WIRE_KNOB_COUNT; k++)
		if (!strcmp(wire_knobs[k].option, opt))
			return k;
	return -1;
}

const char *wire_knob_keys(void)
{
	return "latency, jitter, gap, bandwidth, bulk_gap, burst, "
	       "queue_pkts, queue_bytes, loss";
}

/* The wire knob that is LogGP knob lk; -1 if the wire has none. */
static int wire_knob_by_lgp(int lk)
{
	int k;

	for (k = 0; k < WIRE_KNOB_COUNT; k++)
		if (wire_knobs[k].lgp == lk)
			return k;
	return -1;
}

int wire_shape_conflict(unsigned int given, int by_option, char *err,
			size_t errlen)
{
	enum lgp_knob first, second;
	unsigned int lgp_given = 0;
	int k, a, b;

	for (k = 0; k < WIRE_KNOB_COUNT; k++)
		if ((given & WIRE_KNOB_BIT(k)) && wire_knobs[k].lgp >= 0)
			lgp_given |= LGP_KNOB_BIT(wire_knobs[k].lgp);
	if (!lgp_knob_conflict(lgp_given, &first, &second))
		return 0;
	a = wire_knob_by_lgp(second);
	b = wire_knob_by_lgp(first);
	snprintf(err, errlen, "%s and %s set the same knob: give one of them, "
		 "not both", by_option ? wire_knobs[a].option : wire_knobs[a].key,
		 by_option ? wire_knobs[b].option : wire_knobs[b].key);
	return -EINVAL;
}

/* The offending text as shown in an error: cut, and printable only. */
static void wire_echo(char *dst, size_t len, const char *text)
{
	size_t i;

	for (i = 0; i + 1 < len && text[i]; i++)
		dst[i] = isprint((unsigned char)text[i]) ? text[i] : '?';
	dst[i] = '\0';
}

static int wire_bad(char *err, size_t errlen, const char *name,
		    const char *text, const char *forms, int rc)
{
	char echo[65];

	wire_echo(echo, sizeof(echo), text);
	if (err)
		snprintf(err, errlen, "bad value '%s' for %s: expected %s%s",
			 echo, name, forms, rc == -ERANGE ? " (out of range)" : "");
	return rc;
}

static int wire_parse_lgp(enum lgp_knob lk, const char *name, const char *text,
			  uint64_t *out, char *err, size_t errlen)
{
	int rc = lgp_knob_parse(lk, text, out, NULL, 0);

	if (rc)
		return wire_bad(err, errlen, name, text, lgp_knob_forms(lk), rc);
	return 0;
}

int wire_parse_time(const char *name, const char *text, uint64_t *ns,
		    char *err, size_t errlen)
{
	return wire_parse_lgp(LGP_KNOB_LATENCY, name, text, ns, err, errlen);
}

int wire_parse_u64(const char *name, const char *text, uint64_t *v,
		   char *err, size_t errlen)
{
	const char *forms = "a non-negative integer without sign or unit, "
			    "e.g. 8192";
	unsigned long long x;
	const char *p;
	char *end;

	if (!*text)
		return wire_bad(err, errlen, name, text, forms, -EINVAL);
	for (p = text; *p; p++)
		if (!isdigit((unsigned char)*p))
			return wire_bad(err, errlen, name, text, forms, -EINVAL);
	errno = 0;
	x = strtoull(text, &end, 10);
	if (errno == ERANGE)
		return wire_bad(err, errlen, name, text, forms, -ERANGE);
	*v = x;
	return 0;
}

static int wire_parse_prob(const char *name, const char *text, double *v,
			   char *err, size_t errlen)
{
	const char *forms = "a probability from 0 to 1, e.g. 0.01";
	char *end;
	double x;

	if (!*text || isspace((unsigned char)*text) || *text == '+')
		return wire_bad(err, errlen, name, text, forms, -EINVAL);
	errno = 0;
	x = strtod(text, &end);
	if (*end || errno || !isfinite(x) || x < 0.0 || x > 1.0)
		return wire_bad(err, errlen, name, text, forms, -EINVAL);
	*v = x;
	return 0;
}

int wire_shape_parse(struct wire_shape *s, enum wire_knob k, const char *name,
		     const char *text, char *err, size_t errlen)
{
	uint64_t v;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	switch (k) {
	case WIRE_KNOB_LATENCY:
		return wire_parse_lgp(LGP_KNOB_LATENCY, name, text,
				      &s->latency_ns, err, errlen);
	case WIRE_KNOB_JITTER:
		return wire_parse_lgp(LGP_KNOB_LATENCY, name, text,
				      &s->jitter_ns, err, errlen);
	case WIRE_KNOB_GAP:
		return wire_parse_lgp(LGP_KNOB_GAP, name, text, &s->gap_ns,
				      err, errlen);
	case WIRE_KNOB_BANDWIDTH:
		return wire_parse_lgp(LGP_KNOB_BANDWIDTH, name, text,
				      &s->bulk_gap_fs, err, errlen);
	case WIRE_KNOB_BULK_GAP:
		return wire_parse_lgp(LGP_KNOB_BULK_GAP, name, text,
				      &s->bulk_gap_fs, err, errlen);
	case WIRE_KNOB_BURST:
		return wire_parse_u64(name, text, &s->burst_bytes, err, errlen);
	case WIRE_KNOB_QUEUE_PKTS:
	case WIRE_KNOB_QUEUE_BYTES:
		rc = wire_parse_u64(name, text, &v, err, errlen);
		if (rc)
			return rc;
		if (!v)
			return wire_bad(err, errlen, name, text,
					"an integer of at least 1", -EINVAL);
		if (k == WIRE_KNOB_QUEUE_PKTS)
			s->queue_pkts = v;
		else
			s->queue_bytes = v;
		return 0;
	case WIRE_KNOB_LOSS:
		return wire_parse_prob(name, text, &s->loss, err, errlen);
	default:
		if (err)
			snprintf(err, errlen, "unknown knob");
		return -EINVAL;
	}
}

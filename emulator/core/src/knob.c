/* SPDX-License-Identifier: MIT */
/*
 * Knob names, units and parsing (knob.h).
 *
 * Values are parsed with exact integer arithmetic rather than strtod, so
 * "2.5us" is 2500 ns on every machine and every locale, and a value that
 * does not fit is reported as -ERANGE instead of being rounded silently.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lgp/knob.h"

/*
 * Fractional digits kept; further digits are ignored.  Eighteen keep the
 * fraction below 10^18, so every product below fits in 128 bits.
 */
#define KNOB_FRAC_DIGITS	18
/* Longest part of an offending value echoed in an error message. */
#define KNOB_ECHO_MAX		64
#define KNOB_FS_PER_S		1000000000000000ULL

struct knob_unit {
	const char *name;
	uint64_t scale;
};

/* Time units, in nanoseconds. */
static const struct knob_unit knob_time_units[] = {
	{ "ns", 1 },
	{ "us", 1000 },
	{ "ms", 1000000 },
	{ "s", 1000000000 },
	{ NULL, 0 },
};

/* Time-per-byte units, in femtoseconds per byte. */
static const struct knob_unit knob_bulk_units[] = {
	{ "ps/B", 1000 },
	{ "ns/B", 1000000 },
	{ "us/B", 1000000000 },
	{ NULL, 0 },
};

/* Bandwidth units, in bytes per second (a kbit is 125 bytes). */
static const struct knob_unit knob_bw_units[] = {
	{ "B/s", 1 },
	{ "kB/s", 1000 },
	{ "MB/s", 1000000 },
	{ "GB/s", 1000000000 },
	{ "KiB/s", 1ULL << 10 },
	{ "MiB/s", 1ULL << 20 },
	{ "GiB/s", 1ULL << 30 },
	{ "kbit/s", 125 },
	{ "Mbit/s", 125000 },
	{ "Gbit/s", 125000000 },
	{ NULL, 0 },
};

#define KNOB_TIME_FORMS	"<number>{ns|us|ms|s}, e.g. 10us or 2.5ms"
#define KNOB_BULK_FORMS	"<number>{ps/B|ns/B|us/B}, e.g. 2ns/B or 0.08ns/B"
#define KNOB_BW_FORMS \
	"<number>{B/s|kB/s|MB/s|GB/s|KiB/s|MiB/s|GiB/s|kbit/s|Mbit/s|Gbit/s}" \
	" greater than zero, e.g. 50MB/s or 1Gbit/s"

struct knob_desc {
	const char *name;
	const char *env;
	const char *forms;
	const struct knob_unit *units;
};

static const struct knob_desc knob_descs[LGP_KNOB_COUNT] = {
	[LGP_KNOB_OVERHEAD] = { "overhead", "LOGGP_OVERHEAD",
				KNOB_TIME_FORMS, knob_time_units },
	[LGP_KNOB_SEND_OVERHEAD] = { "send_overhead", "LOGGP_SEND_OVERHEAD",
				     KNOB_TIME_FORMS, knob_time_units },
	[LGP_KNOB_RECV_OVERHEAD] = { "recv_overhead", "LOGGP_RECV_OVERHEAD",
				     KNOB_TIME_FORMS, knob_time_units },
	[LGP_KNOB_GAP] = { "gap", "LOGGP_GAP",
			   KNOB_TIME_FORMS, knob_time_units },
	[LGP_KNOB_LATENCY] = { "latency", "LOGGP_LATENCY",
			       KNOB_TIME_FORMS, knob_time_units },
	[LGP_KNOB_BULK_GAP] = { "bulk_gap", "LOGGP_BULK_GAP",
				KNOB_BULK_FORMS, knob_bulk_units },
	[LGP_KNOB_BANDWIDTH] = { "bandwidth", "LOGGP_BANDWIDTH",
				 KNOB_BW_FORMS, knob_bw_units },
};

/* A non-negative decimal: ip + frac / frac_div. */
struct knob_decimal {
	unsigned __int128 ip;
	uint64_t frac;
	uint64_t frac_div;
	int nonzero;		/* some digit, kept or ignored, is not 0 */
};

static int knob_valid(enum lgp_knob knob)
{
	return (unsigned int)knob < LGP_KNOB_COUNT;
}

const char *lgp_knob_name(enum lgp_knob knob)
{
	return knob_valid(knob) ? knob_descs[knob].name : NULL;
}

const char *lgp_knob_forms(enum lgp_knob knob)
{
	return knob_valid(knob) ? knob_descs[knob].forms : NULL;
}

int lgp_knob_lookup(const char *name)
{
	int k;

	if (!name)
		return -1;
	for (k = 0; k < LGP_KNOB_COUNT; k++)
		if (!strcmp(name, knob_descs[k].name))
			return k;
	return -1;
}

static int knob_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * Parses <digits>[.<digits>] at the start of s and returns where it ends,
 * or NULL if s does not start with one.  The integer part saturates just
 * above UINT64_MAX, which every caller reports as -ERANGE.
 */
static const char *knob_decimal_scan(const char *s, struct knob_decimal *d)
{
	const unsigned __int128 ip_cap = (unsigned __int128)UINT64_MAX + 1;
	int nfrac = 0;

	memset(d, 0, sizeof(*d));
	d->frac_div = 1;
	if (!knob_is_digit(*s))
		return NULL;
	for (; knob_is_digit(*s); s++) {
		d->ip = d->ip * 10 + (unsigned int)(*s - '0');
		if (d->ip > ip_cap)
			d->ip = ip_cap;
		d->nonzero |= *s != '0';
	}
	if (*s != '.')
		return s;
	s++;
	if (!knob_is_digit(*s))
		return NULL;
	for (; knob_is_digit(*s); s++, nfrac++) {
		d->nonzero |= *s != '0';
		if (nfrac >= KNOB_FRAC_DIGITS)
			continue;
		d->frac = d->frac * 10 + (unsigned int)(*s - '0');
		d->frac_div *= 10;
	}
	return s;
}

/* Rounds num / den to nearest; den > 0 and num + den / 2 must fit. */
static unsigned __int128 knob_div_round(unsigned __int128 num,
					unsigned __int128 den)
{
	return (num + den / 2) / den;
}

static int knob_to_scaled(const struct knob_decimal *d, uint64_t scale,
			  uint64_t *out)
{
	unsigned __int128 v;

	if (d->ip > UINT64_MAX)
		return -ERANGE;
	v = d->ip * scale + knob_div_round((unsigned __int128)d->frac * scale,
					   d->frac_div);
	if (v > UINT64_MAX)
		return -ERANGE;
	*out = (uint64_t)v;
	return 0;
}

/* bulk_gap_fs = 10^15 / (value * bytes_per_s), rounded to nearest. */
static int knob_to_bulk_gap(const struct knob_decimal *d, uint64_t bytes_per_s,
			    uint64_t *out)
{
	unsigned __int128 m, den, gap;

	if (!d->nonzero)
		return -EINVAL;
	if (d->ip > UINT64_MAX)
		return -ERANGE;
	/* value = m / frac_div; m < 2^64 * 10^18 < 2^124. */
	m = d->ip * d->frac_div + d->frac;
	if (!m)
		return -ERANGE;
	if (m > ~(unsigned __int128)0 / 2 / bytes_per_s)
		return -ERANGE;
	den = m * bytes_per_s;
	gap = knob_div_round((unsigned __int128)KNOB_FS_PER_S * d->frac_div,
			     den);
	if (!gap || gap > UINT64_MAX)
		return -ERANGE;
	*out = (uint64_t)gap;
	return 0;
}

/* Copies text for an error line: bounded, one line, printable. */
static void knob_echo(char *dst, size_t len, const char *text)
{
	size_t i;

	for (i = 0; text[i] && i + 1 < len; i++)
		dst[i] = (text[i] >= 0x20 && text[i] < 0x7f) ? text[i] : '?';
	dst[i] = '\0';
	if (text[i] && len > 4)
		memcpy(dst + len - 4, "...", 4);
}

static int knob_fail(enum lgp_knob knob, const char *text, int rc,
		     char *err, size_t errlen)
{
	char echo[KNOB_ECHO_MAX + 1];

	if (!err || !errlen)
		return rc;
	knob_echo(echo, sizeof(echo), text ? text : "");
	if (!knob_valid(knob))
		snprintf(err, errlen, "bad value '%s' for an unknown knob", echo);
	else
		snprintf(err, errlen, "bad value '%s' for %s: expected %s%s",
			 echo, knob_descs[knob].env, knob_descs[knob].forms,
			 rc == -ERANGE ? " (out of range)" : "");
	return rc;
}

int lgp_knob_parse(enum lgp_knob knob, const char *text, uint64_t *out,
		   char *err, size_t errlen)
{
	const struct knob_unit *u;
	struct knob_decimal d;
	const char *s;
	int rc;

	if (!knob_valid(knob) || !text)
		return knob_fail(knob, text, -EINVAL, err, errlen);
	s = knob_decimal_scan(text, &d);
	if (!s)
		return knob_fail(knob, text, -EINVAL, err, errlen);
	/* One space between number and unit reads naturally: "10 us". */
	if (*s == ' ')
		s++;
	for (u = knob_descs[knob].units; u->name; u++)
		if (!strcmp(s, u->name))
			break;
	if (!u->name)
		return knob_fail(knob, text, -EINVAL, err, errlen);

	if (knob == LGP_KNOB_BANDWIDTH)
		rc = knob_to_bulk_gap(&d, u->scale, out);
	else
		rc = knob_to_scaled(&d, u->scale, out);
	if (rc)
		return knob_fail(knob, text, rc, err, errlen);
	if (err && errlen)
		err[0] = '\0';
	return 0;
}

void lgp_params_set(struct lgp_params *p, enum lgp_knob knob, uint64_t value)
{
	switch (knob) {
	case LGP_KNOB_OVERHEAD:
		p->send_overhead_ns = value;
		p->recv_overhead_ns = value;
		break;
	case LGP_KNOB_SEND_OVERHEAD:
		p->send_overhead_ns = value;
		break;
	case LGP_KNOB_RECV_OVERHEAD:
		p->recv_overhead_ns = value;
		break;
	case LGP_KNOB_GAP:
		p->gap_ns = value;
		break;
	case LGP_KNOB_LATENCY:
		p->latency_ns = value;
		break;
	case LGP_KNOB_BULK_GAP:
	case LGP_KNOB_BANDWIDTH:
		p->bulk_gap_fs = value;
		break;
	default:
		break;
	}
}

int lgp_params_from_env(struct lgp_params *p, char *err, size_t errlen)
{
	struct lgp_params res = { 0 };
	const char *text;
	uint64_t value;
	int k, rc;

	text = getenv(knob_descs[LGP_KNOB_BANDWIDTH].env);
	if (text && getenv(knob_descs[LGP_KNOB_BULK_GAP].env)) {
		char echo[KNOB_ECHO_MAX + 1];

		knob_echo(echo, sizeof(echo), text);
		if (err && errlen)
			snprintf(err, errlen,
				 "bad value '%s' for LOGGP_BANDWIDTH: expected "
				 "LOGGP_BANDWIDTH or LOGGP_BULK_GAP, not both",
				 echo);
		return -EINVAL;
	}

	/* Enum order puts overhead before the per-side overheads. */
	for (k = 0; k < LGP_KNOB_COUNT; k++) {
		text = getenv(knob_descs[k].env);
		if (!text)
			continue;
		rc = lgp_knob_parse(k, text, &value, err, errlen);
		if (rc)
			return rc;
		lgp_params_set(&res, k, value);
	}
	*p = res;
	return 0;
}

int lgp_params_active(const struct lgp_params *p)
{
	return p->send_overhead_ns || p->recv_overhead_ns || p->gap_ns ||
	       p->latency_ns || p->bulk_gap_fs;
}

int lgp_params_format(const struct lgp_params *p, char *buf, size_t len)
{
	return snprintf(buf, len,
			"send_overhead=%" PRIu64 "ns recv_overhead=%" PRIu64
			"ns gap=%" PRIu64 "ns latency=%" PRIu64
			"ns bulk_gap=%" PRIu64 "fs/B",
			p->send_overhead_ns, p->recv_overhead_ns, p->gap_ns,
			p->latency_ns, p->bulk_gap_fs);
}

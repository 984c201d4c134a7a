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
#define KNOB_FS_PER_S		1000000000000000ULL

_Static_assert(LGP_KNOB_COUNT <= 32, "a knob set is an unsigned int");

struct knob_unit {
	enum lgp_family family;
	const char *name;
	uint64_t scale;
};

/* Every unit of every family, in ns, fs/B or bytes per second. */
static const struct knob_unit knob_units[] = {
#define LGP_UNIT(family, name, scale) { LGP_FAMILY_##family, name, scale },
#include "lgp/knobs.def"
};

static const char *const knob_family_forms[LGP_FAMILY_COUNT] = {
#define LGP_FAMILY(id, metavar, report_unit, report_label, forms) \
	[LGP_FAMILY_##id] = forms,
#include "lgp/knobs.def"
};

struct knob_desc {
	const char *name;
	const char *env;
	enum lgp_family family;
	const char *sets;	/* LGP_PARAM names, separated by spaces */
	const char *group;	/* "" for none */
	const char *help;
};

static const struct knob_desc knob_descs[LGP_KNOB_COUNT] = {
#define LGP_KNOB(id, name, family, sets, group, shims, symbol, what, help) \
	[LGP_KNOB_##id] = { name, "LOGGP_" #id, LGP_FAMILY_##family, sets, \
			    group, help },
#include "lgp/knobs.def"
};

struct knob_param {
	const char *name;
	const char *unit;
	size_t offset;
};

static const struct knob_param knob_params[] = {
#define LGP_PARAM(name, suffix, unit) \
	{ #name, unit, offsetof(struct lgp_params, name##_##suffix) },
#include "lgp/knobs.def"
};

#define KNOB_NPARAMS (sizeof(knob_params) / sizeof(knob_params[0]))
#define KNOB_NUNITS (sizeof(knob_units) / sizeof(knob_units[0]))

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

const char *lgp_knob_env(enum lgp_knob knob)
{
	return knob_valid(knob) ? knob_descs[knob].env : NULL;
}

const char *lgp_knob_help(enum lgp_knob knob)
{
	return knob_valid(knob) ? knob_descs[knob].help : NULL;
}

const char *lgp_knob_forms(enum lgp_knob knob)
{
	return knob_valid(knob) ? knob_family_forms[knob_descs[knob].family] :
				  NULL;
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

int lgp_knob_conflict(unsigned int given, enum lgp_knob *first,
		      enum lgp_knob *second)
{
	int a, b;

	for (a = 0; a < LGP_KNOB_COUNT; a++) {
		if (!(given & LGP_KNOB_BIT(a)) || !knob_descs[a].group[0])
			continue;
		for (b = a + 1; b < LGP_KNOB_COUNT; b++) {
			if ((given & LGP_KNOB_BIT(b)) &&
			    !strcmp(knob_descs[a].group, knob_descs[b].group)) {
				*first = a;
				*second = b;
				return 1;
			}
		}
	}
	return 0;
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

void lgp_echo(char *dst, size_t len, const char *text)
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
	char echo[LGP_ECHO_MAX + 1];

	if (!err || !errlen)
		return rc;
	lgp_echo(echo, sizeof(echo), text ? text : "");
	if (!knob_valid(knob))
		snprintf(err, errlen, "bad value '%s' for an unknown knob", echo);
	else
		snprintf(err, errlen, "bad value '%s' for %s: expected %s%s",
			 echo, knob_descs[knob].env, lgp_knob_forms(knob),
			 rc == -ERANGE ? " (out of range)" : "");
	return rc;
}

int lgp_knob_parse(enum lgp_knob knob, const char *text, uint64_t *out,
		   char *err, size_t errlen)
{
	const struct knob_unit *u;
	struct knob_decimal d;
	enum lgp_family family;
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
	family = knob_descs[knob].family;
	for (u = knob_units; u < knob_units + KNOB_NUNITS; u++)
		if (u->family == family && !strcmp(s, u->name))
			break;
	if (u == knob_units + KNOB_NUNITS)
		return knob_fail(knob, text, -EINVAL, err, errlen);

	if (family == LGP_FAMILY_RATE)
		rc = knob_to_bulk_gap(&d, u->scale, out);
	else
		rc = knob_to_scaled(&d, u->scale, out);
	if (rc)
		return knob_fail(knob, text, rc, err, errlen);
	if (err && errlen)
		err[0] = '\0';
	return 0;
}

/* The param named by the word at s of n characters; NULL if none. */
static const struct knob_param *knob_param_word(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < KNOB_NPARAMS; i++)
		if (strlen(knob_params[i].name) == n &&
		    !strncmp(knob_params[i].name, s, n))
			return &knob_params[i];
	return NULL;
}

void lgp_params_set(struct lgp_params *p, enum lgp_knob knob, uint64_t value)
{
	const struct knob_param *param;
	const char *s;
	size_t n;

	if (!knob_valid(knob))
		return;
	for (s = knob_descs[knob].sets; *s; s += n) {
		s += strspn(s, " ");
		n = strcspn(s, " ");
		param = knob_param_word(s, n);
		if (param)
			memcpy((char *)p + param->offset, &value, sizeof(value));
	}
}

int lgp_params_read(struct lgp_params *p, lgp_knob_source get, void *ctx,
		    char *err, size_t errlen)
{
	const char *text[LGP_KNOB_COUNT];
	struct lgp_params res = { 0 };
	enum lgp_knob first, second;
	unsigned int given = 0;
	uint64_t value;
	int k, rc;

	for (k = 0; k < LGP_KNOB_COUNT; k++) {
		text[k] = get(k, ctx);
		if (text[k])
			given |= LGP_KNOB_BIT(k);
	}
	if (lgp_knob_conflict(given, &first, &second)) {
		char echo[LGP_ECHO_MAX + 1];

		lgp_echo(echo, sizeof(echo), text[second]);
		if (err && errlen)
			snprintf(err, errlen,
				 "bad value '%s' for %s: expected %s or %s, "
				 "not both", echo, knob_descs[second].env,
				 knob_descs[second].env, knob_descs[first].env);
		return -EINVAL;
	}
	for (k = 0; k < LGP_KNOB_COUNT; k++) {
		if (!text[k])
			continue;
		rc = lgp_knob_parse(k, text[k], &value, err, errlen);
		if (rc)
			return rc;
		lgp_params_set(&res, k, value);
	}
	*p = res;
	return 0;
}

static const char *knob_from_env(enum lgp_knob knob, void *ctx)
{
	(void)ctx;
	return getenv(knob_descs[knob].env);
}

int lgp_params_from_env(struct lgp_params *p, char *err, size_t errlen)
{
	return lgp_params_read(p, knob_from_env, NULL, err, errlen);
}

int lgp_params_active(const struct lgp_params *p)
{
	uint64_t v;
	size_t i;

	for (i = 0; i < KNOB_NPARAMS; i++) {
		memcpy(&v, (const char *)p + knob_params[i].offset, sizeof(v));
		if (v)
			return 1;
	}
	return 0;
}

int lgp_params_format(const struct lgp_params *p, char *buf, size_t len)
{
	size_t i, used = 0;
	uint64_t v;
	int n;

	if (len)
		buf[0] = '\0';
	for (i = 0; i < KNOB_NPARAMS; i++) {
		memcpy(&v, (const char *)p + knob_params[i].offset, sizeof(v));
		n = snprintf(buf + (used < len ? used : len),
			     used < len ? len - used : 0, "%s%s=%" PRIu64 "%s",
			     i ? " " : "", knob_params[i].name, v,
			     knob_params[i].unit);
		if (n < 0)
			return n;
		used += (size_t)n;
	}
	return (int)used;
}

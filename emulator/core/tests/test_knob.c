/* SPDX-License-Identifier: MIT */
/*
 * Unit test of knob.h and env.h: every case of knob_cases.txt (units,
 * rounding, range, typos, messages, knobs read together, the environment),
 * then what the cases cannot say: buffers, names, params, getenv.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "check.h"
#include "lgp/env.h"
#include "lgp/knob.h"

#define CASE_LINE_MAX	1024
#define CASE_ARGS_MAX	8

/* One line of knob_cases.txt, split: kind, its arguments, the expectation. */
struct knob_case {
	char kind[8];
	char name[CASE_ARGS_MAX][32];	/* knob of "parse" and "set" args */
	char text[CASE_ARGS_MAX][128];	/* unescaped quoted args */
	int nargs;
	const char *expect;
};

/* Unescapes the quoted string at *s into dst; advances *s past it. */
static int case_quoted(const char **s, char *dst, size_t len)
{
	const char *p = *s;
	size_t n = 0;
	char c;

	if (*p++ != '"')
		return -1;
	while (*p && *p != '"' && n + 1 < len) {
		c = *p++;
		if (c == '\\') {
			c = *p++;
			if (c == 'n') {
				c = '\n';
			} else if (c == 't') {
				c = '\t';
			} else if (c == 'x' && isxdigit((unsigned char)p[0]) &&
				   isxdigit((unsigned char)p[1])) {
				char hex[3] = { p[0], p[1], '\0' };

				c = (char)strtol(hex, NULL, 16);
				p += 2;
			} else if (c != '"' && c != '\\') {
				return -1;
			}
		}
		dst[n++] = c;
	}
	dst[n] = '\0';
	if (*p != '"')
		return -1;
	*s = p + 1;
	return 0;
}

/* Splits line (its '\n' removed) into c; -1 if it is malformed. */
static int case_split(const char *line, struct knob_case *c)
{
	const char *s = line, *arrow = strstr(line, " => ");
	size_t n;

	memset(c, 0, sizeof(*c));
	if (!arrow)
		return -1;
	c->expect = arrow + 4;
	n = strcspn(s, " ");
	if (n >= sizeof(c->kind))
		return -1;
	memcpy(c->kind, s, n);
	s += n;
	while (s < arrow) {
		if (*s++ != ' ' || c->nargs == CASE_ARGS_MAX)
			return -1;
		if (*s != '"') {
			n = strcspn(s, " =");
			if (n >= sizeof(c->name[0]))
				return -1;
			memcpy(c->name[c->nargs], s, n);
			s += n;
			if (*s == ' ' && !strcmp(c->kind, "parse") && !c->nargs)
				s++;
			else if (*s++ != '=')
				return -1;
		}
		if (case_quoted(&s, c->text[c->nargs], sizeof(c->text[0])))
			return -1;
		c->nargs++;
	}
	return s == arrow ? 0 : -1;
}

static void case_parse(const struct knob_case *c, char *got, size_t len)
{
	int k = lgp_knob_lookup(c->name[0]);
	uint64_t v = 12345;
	int rc;

	rc = lgp_knob_parse(k, c->text[0], &v, got, len);
	if (!rc) {
		CHECK_STR(got, "");
		snprintf(got, len, "%" PRIu64, v);
	} else {
		CHECK(rc == (strstr(got, "(out of range)") ? -ERANGE : -EINVAL));
		CHECK_EQ_U64(v, 12345);
	}
}

static const char *case_source(enum lgp_knob knob, void *ctx)
{
	const struct knob_case *c = ctx;
	int i;

	for (i = 0; i < c->nargs; i++)
		if (lgp_knob_lookup(c->name[i]) == (int)knob)
			return c->text[i];
	return NULL;
}

static void case_set(const struct knob_case *c, char *got, size_t len)
{
	struct lgp_params p;
	int i;

	for (i = 0; i < c->nargs; i++)
		CHECK(lgp_knob_lookup(c->name[i]) >= 0);
	memset(&p, 0xff, sizeof(p));
	if (!lgp_params_read(&p, case_source, (void *)c, got, len))
		lgp_params_format(&p, got, len);
}

static void case_env(const struct knob_case *c, char *got, size_t len)
{
	char *envp[CASE_ARGS_MAX + 1];
	int i;

	for (i = 0; i < c->nargs; i++)
		envp[i] = (char *)c->text[i];
	envp[i] = NULL;
	if (!lgp_env_check(envp, got, len))
		snprintf(got, len, "ok");
}

/* Runs every case of the shared file (its path is the first argument). */
static void test_cases(const char *path)
{
	char line[CASE_LINE_MAX], got[LGP_KNOB_ERRLEN];
	struct knob_case c;
	unsigned int lineno = 0, ncases = 0;
	FILE *f = fopen(path, "r");

	if (!CHECK(f != NULL)) {
		fprintf(stderr, "    cannot open %s\n", path ? path : "(none)");
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		ncases++;
		got[0] = '\0';
		if (case_split(line, &c)) {
			CHECK(!"malformed case line");
		} else if (!strcmp(c.kind, "parse") && c.nargs == 1) {
			case_parse(&c, got, sizeof(got));
		} else if (!strcmp(c.kind, "set")) {
			case_set(&c, got, sizeof(got));
		} else if (!strcmp(c.kind, "env")) {
			case_env(&c, got, sizeof(got));
		} else {
			CHECK(!"unknown case kind");
		}
		if (!CHECK(!strcmp(got, c.expect)))
			fprintf(stderr, "    %s:%u: %s\n    got %s\n", path,
				lineno, line, got);
	}
	fclose(f);
	CHECK(ncases >= 100);
}

static void test_messages(void)
{
	char err[512], small[16];
	uint64_t v;

	/* The message stays on one line whatever the value holds. */
	lgp_knob_parse(LGP_KNOB_LATENCY, "1\r\nus", &v, err, sizeof(err));
	CHECK(!strchr(err, '\n') && !strchr(err, '\r'));
	/* A long value is shortened, not allowed to crowd out the forms. */
	{
		char longtext[300];

		memset(longtext, '9', sizeof(longtext) - 1);
		longtext[sizeof(longtext) - 1] = '\0';
		lgp_knob_parse(LGP_KNOB_LATENCY, longtext, &v, err,
			       sizeof(err));
		CHECK(strstr(err, "...' for LOGGP_LATENCY: expected <number>"));
	}

	/* The longest message fits in LGP_KNOB_ERRLEN. */
	{
		char longtext[300], big[1024];

		memset(longtext, '9', sizeof(longtext) - 1);
		strcpy(longtext + sizeof(longtext) - 6, "GB/s");
		CHECK_EQ_INT(lgp_knob_parse(LGP_KNOB_BANDWIDTH, longtext, &v,
					    big, sizeof(big)), -ERANGE);
		CHECK(strstr(big, "(out of range)") != NULL);
		CHECK(strlen(big) < LGP_KNOB_ERRLEN);
	}

	/* Short or missing buffers truncate or skip the message. */
	CHECK_EQ_INT(lgp_knob_parse(LGP_KNOB_LATENCY, "x", &v, small,
				    sizeof(small)), -EINVAL);
	CHECK_EQ_U64(strlen(small), sizeof(small) - 1);
	CHECK_EQ_INT(lgp_knob_parse(LGP_KNOB_LATENCY, "x", &v, NULL, 0),
		     -EINVAL);
	CHECK_EQ_INT(lgp_knob_parse(LGP_KNOB_LATENCY, NULL, &v, err,
				    sizeof(err)), -EINVAL);
	CHECK_EQ_INT(lgp_knob_parse(LGP_KNOB_COUNT, "1us", &v, err,
				    sizeof(err)), -EINVAL);
}

static void test_names(void)
{
	int k;

	for (k = 0; k < LGP_KNOB_COUNT; k++) {
		CHECK(lgp_knob_name(k) != NULL);
		CHECK(lgp_knob_forms(k) != NULL);
		CHECK(lgp_knob_help(k) != NULL && lgp_knob_help(k)[0]);
		CHECK_EQ_INT(lgp_knob_lookup(lgp_knob_name(k)), k);
		CHECK(strlen(lgp_knob_env(k)) == 6 + strlen(lgp_knob_name(k)));
	}
	for (k = 0; k < LGP_SETTING_COUNT; k++)
		CHECK(!strncmp(lgp_setting_env(k), "LOGGP_", 6));
	CHECK_STR(lgp_setting_env(LGP_SETTING_CLOCK), "LOGGP_CLOCK");
	CHECK(lgp_setting_env(LGP_SETTING_COUNT) == NULL);
	CHECK_STR(lgp_knob_name(LGP_KNOB_BULK_GAP), "bulk_gap");
	CHECK_STR(lgp_knob_env(LGP_KNOB_BULK_GAP), "LOGGP_BULK_GAP");
	CHECK_STR(lgp_knob_help(LGP_KNOB_OVERHEAD),
		  "Δo, both Δo_s and Δo_r at once");
	CHECK(lgp_knob_env(LGP_KNOB_COUNT) == NULL);
	CHECK(lgp_knob_help(LGP_KNOB_COUNT) == NULL);
	CHECK_STR(lgp_knob_name(LGP_KNOB_SEND_OVERHEAD), "send_overhead");
	CHECK(lgp_knob_name(LGP_KNOB_COUNT) == NULL);
	CHECK(lgp_knob_forms(LGP_KNOB_COUNT) == NULL);
	CHECK_EQ_INT(lgp_knob_lookup("LATENCY"), -1);
	CHECK_EQ_INT(lgp_knob_lookup("LOGGP_LATENCY"), -1);
	CHECK_EQ_INT(lgp_knob_lookup("latenc"), -1);
	CHECK_EQ_INT(lgp_knob_lookup(""), -1);
	CHECK_EQ_INT(lgp_knob_lookup(NULL), -1);
}

static void test_params(void)
{
	struct lgp_params p = { 0 };
	char buf[256];
	int n;

	CHECK(!lgp_params_active(&p));
	lgp_params_set(&p, LGP_KNOB_OVERHEAD, 10000);
	CHECK_EQ_U64(p.send_overhead_ns, 10000);
	CHECK_EQ_U64(p.recv_overhead_ns, 10000);
	CHECK(lgp_params_active(&p));
	lgp_params_set(&p, LGP_KNOB_RECV_OVERHEAD, 5);
	CHECK_EQ_U64(p.send_overhead_ns, 10000);
	CHECK_EQ_U64(p.recv_overhead_ns, 5);
	lgp_params_set(&p, LGP_KNOB_GAP, 7);
	lgp_params_set(&p, LGP_KNOB_LATENCY, 8);
	lgp_params_set(&p, LGP_KNOB_BANDWIDTH, 9);
	CHECK_EQ_U64(p.bulk_gap_fs, 9);
	lgp_params_set(&p, LGP_KNOB_BULK_GAP, 11);
	CHECK_EQ_U64(p.bulk_gap_fs, 11);
	n = lgp_params_format(&p, buf, sizeof(buf));
	CHECK_STR(buf, "send_overhead=10000ns recv_overhead=5ns gap=7ns "
		  "latency=8ns bulk_gap=11fs/B");
	CHECK_EQ_U64((uint64_t)n, strlen(buf));

	memset(&p, 0, sizeof(p));
	lgp_params_set(&p, LGP_KNOB_BULK_GAP, 1);
	CHECK(lgp_params_active(&p));
}

static void env_clear(void)
{
	int k;

	for (k = 0; k < LGP_KNOB_COUNT; k++)
		unsetenv(lgp_knob_env(k));
}

/* lgp_params_from_env() reads LOGGP_<KNOB>; the rules are the set cases'. */
static void test_env(void)
{
	struct lgp_params p;
	char err[512];

	env_clear();
	memset(&p, 0xff, sizeof(p));
	CHECK_EQ_INT(lgp_params_from_env(&p, err, sizeof(err)), 0);
	CHECK(!lgp_params_active(&p));

	setenv("LOGGP_OVERHEAD", "10us", 1);
	setenv("LOGGP_SEND_OVERHEAD", "2us", 1);
	setenv("LOGGP_GAP", "3us", 1);
	setenv("LOGGP_LATENCY", "4.5us", 1);
	setenv("LOGGP_BANDWIDTH", "50MB/s", 1);
	CHECK_EQ_INT(lgp_params_from_env(&p, err, sizeof(err)), 0);
	CHECK_EQ_U64(p.send_overhead_ns, 2000);
	CHECK_EQ_U64(p.recv_overhead_ns, 10000);
	CHECK_EQ_U64(p.gap_ns, 3000);
	CHECK_EQ_U64(p.latency_ns, 4500);
	CHECK_EQ_U64(p.bulk_gap_fs, 20000000);

	/* *p is left alone on error; set but empty is a bad value. */
	setenv("LOGGP_BULK_GAP", "1ns/B", 1);
	CHECK_EQ_INT(lgp_params_from_env(&p, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "not both") != NULL);
	unsetenv("LOGGP_BANDWIDTH");
	setenv("LOGGP_LATENCY", "", 1);
	CHECK_EQ_INT(lgp_params_from_env(&p, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "'' for LOGGP_LATENCY") != NULL);
	CHECK_EQ_U64(p.latency_ns, 4500);
	setenv("LOGGP_LATENCY", "99999999999999s", 1);
	CHECK_EQ_INT(lgp_params_from_env(&p, err, sizeof(err)), -ERANGE);
	setenv("LOGGP_LATENCY", "1us", 1);
	CHECK_EQ_INT(lgp_params_from_env(&p, err, sizeof(err)), 0);
	CHECK_EQ_U64(p.bulk_gap_fs, 1000000);
	env_clear();
}

static void test_conflict(void)
{
	enum lgp_knob a = LGP_KNOB_COUNT, b = LGP_KNOB_COUNT;
	unsigned int all = 0;
	int k;

	CHECK(!lgp_knob_conflict(0, &a, &b));
	CHECK(!lgp_knob_conflict(LGP_KNOB_BIT(LGP_KNOB_BULK_GAP) |
				 LGP_KNOB_BIT(LGP_KNOB_LATENCY), &a, &b));
	CHECK(!lgp_knob_conflict(LGP_KNOB_BIT(LGP_KNOB_OVERHEAD) |
				 LGP_KNOB_BIT(LGP_KNOB_SEND_OVERHEAD), &a, &b));
	CHECK_EQ_INT(a, LGP_KNOB_COUNT);
	CHECK(lgp_knob_conflict(LGP_KNOB_BIT(LGP_KNOB_BANDWIDTH) |
				LGP_KNOB_BIT(LGP_KNOB_BULK_GAP), &a, &b));
	CHECK_EQ_INT(a, LGP_KNOB_BULK_GAP);
	CHECK_EQ_INT(b, LGP_KNOB_BANDWIDTH);
	for (k = 0; k < LGP_KNOB_COUNT; k++)
		all |= LGP_KNOB_BIT(k);
	CHECK(lgp_knob_conflict(all, &a, &b));
	CHECK_EQ_INT(a, LGP_KNOB_BULK_GAP);
}

static void test_closest(void)
{
	char *envp[] = { "LOGGP_GAP=1us", "LOGGP_GAPS=1us", NULL };
	char err[LGP_KNOB_ERRLEN], longname[300];

	CHECK_STR(lgp_env_closest("LOGGP_LATENCCY"), "LOGGP_LATENCY");
	CHECK_STR(lgp_env_closest("LOGGP_LATENCCY=10us"), "LOGGP_LATENCY");
	CHECK_STR(lgp_env_closest("LOGGP_LATENCY"), "LOGGP_LATENCY");
	CHECK_STR(lgp_env_closest("LOGGP_SEND_OVERHAED"), "LOGGP_SEND_OVERHEAD");
	CHECK_STR(lgp_env_closest("LOGGP_RECV_OVERHEAD_"), "LOGGP_RECV_OVERHEAD");
	CHECK_STR(lgp_env_closest("LOGGP_BANDWITH"), "LOGGP_BANDWIDTH");
	CHECK_STR(lgp_env_closest("LOGGP_CLOK"), "LOGGP_CLOCK");
	CHECK_STR(lgp_env_closest("LOGGP_PROGRES_THREAD"),
		  "LOGGP_PROGRESS_THREAD");
	CHECK_STR(lgp_env_closest("LOGGP_RUNDIR"), "LOGGP_RUN_DIR");
	/* A tie goes to the first in registry order. */
	CHECK_STR(lgp_env_closest("LOGGP_GAPX"), "LOGGP_GAP");
	CHECK_STR(lgp_env_closest(""), "LOGGP_GAP");

	/* The first unknown name is reported, as one bounded line. */
	CHECK_EQ_INT(lgp_env_check(envp, err, sizeof(err)), -EINVAL);
	CHECK_STR(err, "unknown variable LOGGP_GAPS: did you mean LOGGP_GAP?");
	memset(longname, 'X', sizeof(longname) - 1);
	memcpy(longname, "LOGGP_\n", 7);
	longname[sizeof(longname) - 1] = '\0';
	envp[1] = longname;
	CHECK_EQ_INT(lgp_env_check(envp, err, sizeof(err)), -EINVAL);
	CHECK(strlen(err) < sizeof(err) - 1 && !strchr(err, '\n'));
	CHECK(strstr(err, "unknown variable LOGGP_?XXX") == err);
	CHECK_EQ_INT(lgp_env_check(NULL, err, sizeof(err)), 0);
	CHECK_EQ_INT(lgp_env_check(envp, NULL, 0), -EINVAL);
}

int main(int argc, char **argv)
{
	test_cases(argc > 1 ? argv[1] : NULL);
	test_messages();
	test_names();
	test_params();
	test_env();
	test_conflict();
	test_closest();
	return check_done("test_knob");
}

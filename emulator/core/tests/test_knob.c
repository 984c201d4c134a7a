/* SPDX-License-Identifier: MIT */
/* Unit test of knob.h: units, rounding, range, typos, messages, env. */
#include <errno.h>
#include <stdlib.h>

#include "check.h"
#include "lgp/knob.h"

struct knob_case {
	enum lgp_knob knob;
	const char *text;
	int rc;
	uint64_t value;
};

static const struct knob_case knob_cases[] = {
	/* time knobs: nanoseconds */
	{ LGP_KNOB_LATENCY, "0ns", 0, 0 },
	{ LGP_KNOB_LATENCY, "0s", 0, 0 },
	{ LGP_KNOB_LATENCY, "10ns", 0, 10 },
	{ LGP_KNOB_LATENCY, "10us", 0, 10000 },
	{ LGP_KNOB_LATENCY, "2.5us", 0, 2500 },
	{ LGP_KNOB_LATENCY, "2.5ms", 0, 2500000 },
	{ LGP_KNOB_LATENCY, "1s", 0, 1000000000 },
	{ LGP_KNOB_LATENCY, "007us", 0, 7000 },
	{ LGP_KNOB_LATENCY, "0.5ns", 0, 1 },		/* half rounds up */
	{ LGP_KNOB_LATENCY, "0.4ns", 0, 0 },
	{ LGP_KNOB_LATENCY, "0.0000000015s", 0, 2 },
	{ LGP_KNOB_LATENCY, "0.000000001s", 0, 1 },
	{ LGP_KNOB_LATENCY, "10 us", 0, 10000 },	/* one space allowed */
	{ LGP_KNOB_GAP, "1.25us", 0, 1250 },
	{ LGP_KNOB_OVERHEAD, "100us", 0, 100000 },
	{ LGP_KNOB_SEND_OVERHEAD, "3ms", 0, 3000000 },
	{ LGP_KNOB_RECV_OVERHEAD, "4s", 0, 4000000000ULL },
	/* digits past the eighteenth fractional one are ignored */
	{ LGP_KNOB_LATENCY, "1.0000000000000000000001us", 0, 1000 },
	{ LGP_KNOB_LATENCY, "0.0000000000000000009s", 0, 0 },
	/* the top of the range, and one past it */
	{ LGP_KNOB_LATENCY, "18446744073709551615ns", 0, UINT64_MAX },
	{ LGP_KNOB_LATENCY, "18446744073709551615.4ns", 0, UINT64_MAX },
	{ LGP_KNOB_LATENCY, "18446744073.709551615s", 0, UINT64_MAX },
	{ LGP_KNOB_LATENCY, "18446744073709551615.5ns", -ERANGE, 0 },
	{ LGP_KNOB_LATENCY, "18446744073709551616ns", -ERANGE, 0 },
	{ LGP_KNOB_LATENCY, "18446744074s", -ERANGE, 0 },
	{ LGP_KNOB_LATENCY, "99999999999999999999999999999999999999999s",
	  -ERANGE, 0 },
	/* malformed: no unit, unknown unit, typos, signs, exponents */
	{ LGP_KNOB_LATENCY, "", -EINVAL, 0 },
	{ LGP_KNOB_LATENCY, "0", -EINVAL, 0 },
	{ LGP_KNOB_LATENCY, "5", -EINVAL, 0 },
	{ LGP_KNOB_LATENCY, "us", -EINVAL, 0 },
	{ LGP_KNOB_LATENCY, "10u", -EINVAL, 0 },
	{ LGP_KNOB_LATENCY, "10uss", -EINVAL, 0 },
	{ LGP_KNOB_LATENCY, "10US", -EINVAL, 0 },
	{ LGP_KNOB_LATENCY, "10 ms ", -EINVAL, 0 },
	{ LGP_KNOB_LATENCY, "10  us", -EINVAL, 0 },
	{ LGP_KNOB_LATENCY, " 10us", -EINVAL, 0 },
	{ LGP_KNOB_LATENCY, "10us ", -EINVAL, 0 },
	{ LGP_KNOB_LATENCY, "10us\n", -EINVAL, 0 },
	{ LGP_KNOB_LATENCY, "-5us", -EINVAL, 0 },
	{ LGP_KNOB_LATENCY, "+5us", -EINVAL, 0 },
	{ LGP_KNOB_LATENCY, "1e3us", -EINVAL, 0 },
	{ LGP_KNOB_LATENCY, "1E3us", -EINVAL, 0 },
	{ LGP_KNOB_LATENCY, "0x10us", -EINVAL, 0 },
	{ LGP_KNOB_LATENCY, ".5us", -EINVAL, 0 },
	{ LGP_KNOB_LATENCY, "5.us", -EINVAL, 0 },
	{ LGP_KNOB_LATENCY, "1.2.3us", -EINVAL, 0 },
	{ LGP_KNOB_LATENCY, "1,5us", -EINVAL, 0 },
	{ LGP_KNOB_LATENCY, "10ns/B", -EINVAL, 0 },
	{ LGP_KNOB_LATENCY, "10MB/s", -EINVAL, 0 },
	{ LGP_KNOB_LATENCY, "inf", -EINVAL, 0 },
	{ LGP_KNOB_LATENCY, "nan", -EINVAL, 0 },
	/* malformed wins over out of range */
	{ LGP_KNOB_LATENCY, "99999999999999999999999xs", -EINVAL, 0 },

	/* bulk_gap: femtoseconds per byte */
	{ LGP_KNOB_BULK_GAP, "0ns/B", 0, 0 },
	{ LGP_KNOB_BULK_GAP, "1ns/B", 0, 1000000 },
	{ LGP_KNOB_BULK_GAP, "0.08ns/B", 0, 80000 },
	{ LGP_KNOB_BULK_GAP, "1ps/B", 0, 1000 },
	{ LGP_KNOB_BULK_GAP, "0.001ps/B", 0, 1 },
	{ LGP_KNOB_BULK_GAP, "1us/B", 0, 1000000000 },
	{ LGP_KNOB_BULK_GAP, "2 ns/B", 0, 2000000 },
	{ LGP_KNOB_BULK_GAP, "18446744073.709551615us/B", 0, UINT64_MAX },
	{ LGP_KNOB_BULK_GAP, "18446744074us/B", -ERANGE, 0 },
	{ LGP_KNOB_BULK_GAP, "1ns", -EINVAL, 0 },
	{ LGP_KNOB_BULK_GAP, "1ns/b", -EINVAL, 0 },
	{ LGP_KNOB_BULK_GAP, "1fs/B", -EINVAL, 0 },
	{ LGP_KNOB_BULK_GAP, "1", -EINVAL, 0 },
	{ LGP_KNOB_BULK_GAP, "-1ns/B", -EINVAL, 0 },
	{ LGP_KNOB_BULK_GAP, "1GB/s", -EINVAL, 0 },

	/* bandwidth: stored as femtoseconds per byte, rounded to nearest */
	{ LGP_KNOB_BANDWIDTH, "1GB/s", 0, 1000000 },
	{ LGP_KNOB_BANDWIDTH, "50MB/s", 0, 20000000 },
	{ LGP_KNOB_BANDWIDTH, "50 MB/s", 0, 20000000 },
	{ LGP_KNOB_BANDWIDTH, "2.5GB/s", 0, 400000 },
	{ LGP_KNOB_BANDWIDTH, "1B/s", 0, 1000000000000000ULL },
	{ LGP_KNOB_BANDWIDTH, "1kB/s", 0, 1000000000000ULL },
	{ LGP_KNOB_BANDWIDTH, "1KiB/s", 0, 976562500000ULL },
	{ LGP_KNOB_BANDWIDTH, "1MiB/s", 0, 953674316 },
	{ LGP_KNOB_BANDWIDTH, "1GiB/s", 0, 931323 },
	{ LGP_KNOB_BANDWIDTH, "1kbit/s", 0, 8000000000000ULL },
	{ LGP_KNOB_BANDWIDTH, "1Mbit/s", 0, 8000000000ULL },
	{ LGP_KNOB_BANDWIDTH, "1Gbit/s", 0, 8000000 },
	{ LGP_KNOB_BANDWIDTH, "10Gbit/s", 0, 800000 },
	{ LGP_KNOB_BANDWIDTH, "1000000GB/s", 0, 1 },	/* 1 PB/s */
	{ LGP_KNOB_BANDWIDTH, "1999999GB/s", 0, 1 },
	{ LGP_KNOB_BANDWIDTH, "0.0001B/s", 0, 10000000000000000000ULL },
	{ LGP_KNOB_BANDWIDTH, "3000000GB/s", -ERANGE, 0 },	/* < 0.5 fs/B */
	{ LGP_KNOB_BANDWIDTH, "0.00001B/s", -ERANGE, 0 },	/* > 2^64 fs/B */
	{ LGP_KNOB_BANDWIDTH, "99999999999999999999999GB/s", -ERANGE, 0 },
	{ LGP_KNOB_BANDWIDTH, "0.0000000000000000001B/s", -ERANGE, 0 },
	{ LGP_KNOB_BANDWIDTH, "0B/s", -EINVAL, 0 },
	{ LGP_KNOB_BANDWIDTH, "0GB/s", -EINVAL, 0 },
	{ LGP_KNOB_BANDWIDTH, "0.000MB/s", -EINVAL, 0 },
	{ LGP_KNOB_BANDWIDTH, "50", -EINVAL, 0 },
	{ LGP_KNOB_BANDWIDTH, "50MB", -EINVAL, 0 },
	{ LGP_KNOB_BANDWIDTH, "50MB/S", -EINVAL, 0 },
	{ LGP_KNOB_BANDWIDTH, "50Mb/s", -EINVAL, 0 },
	{ LGP_KNOB_BANDWIDTH, "50MBps", -EINVAL, 0 },
	{ LGP_KNOB_BANDWIDTH, "50mbit/s", -EINVAL, 0 },
	{ LGP_KNOB_BANDWIDTH, "-50MB/s", -EINVAL, 0 },
	{ LGP_KNOB_BANDWIDTH, "1ns/B", -EINVAL, 0 },
};

static void test_parse_table(void)
{
	char err[256];
	uint64_t v;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(knob_cases) / sizeof(knob_cases[0]); i++) {
		const struct knob_case *c = &knob_cases[i];

		v = 12345;
		rc = lgp_knob_parse(c->knob, c->text, &v, err, sizeof(err));
		if (!CHECK(rc == c->rc))
			fprintf(stderr, "    %s '%s': rc %d, want %d\n",
				lgp_knob_name(c->knob), c->text, rc, c->rc);
		if (!c->rc)
			CHECK_EQ_U64(v, c->value);
		if (c->rc)
			CHECK(strncmp(err, "bad value '", 11) == 0);
		else
			CHECK_STR(err, "");
	}
}

static void test_messages(void)
{
	char err[512], small[16];
	uint64_t v;

	lgp_knob_parse(LGP_KNOB_LATENCY, "10uss", &v, err, sizeof(err));
	CHECK_STR(err, "bad value '10uss' for LOGGP_LATENCY: expected "
		  "<number>{ns|us|ms|s}, e.g. 10us or 2.5ms");
	lgp_knob_parse(LGP_KNOB_BULK_GAP, "5", &v, err, sizeof(err));
	CHECK_STR(err, "bad value '5' for LOGGP_BULK_GAP: expected "
		  "<number>{ps/B|ns/B|us/B}, e.g. 2ns/B or 0.08ns/B");
	lgp_knob_parse(LGP_KNOB_BANDWIDTH, "0MB/s", &v, err, sizeof(err));
	CHECK_STR(err, "bad value '0MB/s' for LOGGP_BANDWIDTH: expected "
		  "<number>{B/s|kB/s|MB/s|GB/s|KiB/s|MiB/s|GiB/s|kbit/s|"
		  "Mbit/s|Gbit/s} greater than zero, e.g. 50MB/s or 1Gbit/s");
	lgp_knob_parse(LGP_KNOB_GAP, "99999999999s", &v, err, sizeof(err));
	CHECK_STR(err, "bad value '99999999999s' for LOGGP_GAP: expected "
		  "<number>{ns|us|ms|s}, e.g. 10us or 2.5ms (out of range)");
	lgp_knob_parse(LGP_KNOB_OVERHEAD, "", &v, err, sizeof(err));
	CHECK(strncmp(err, "bad value '' for LOGGP_OVERHEAD: expected ",
		      42) == 0);

	/* The message stays on one line whatever the value holds. */
	lgp_knob_parse(LGP_KNOB_LATENCY, "1\nus", &v, err, sizeof(err));
	CHECK(strncmp(err, "bad value '1?us' for LOGGP_LATENCY", 34) == 0);
	CHECK(!strchr(err, '\n'));
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
		CHECK_EQ_INT(lgp_knob_lookup(lgp_knob_name(k)), k);
	}
	CHECK_STR(lgp_knob_name(LGP_KNOB_BULK_GAP), "bulk_gap");
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
	char name[64];
	const char *s;
	size_t i;

	for (k = 0; k < LGP_KNOB_COUNT; k++) {
		s = lgp_knob_name(k);
		strcpy(name, "LOGGP_");
		for (i = 0; s[i]; i++)
			name[6 + i] = (char)(s[i] >= 'a' && s[i] <= 'z' ?
					     s[i] - 'a' + 'A' : s[i]);
		name[6 + i] = '\0';
		unsetenv(name);
	}
}

static void test_env(void)
{
	struct lgp_params p;
	char err[512];
	int rc;

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

	setenv("LOGGP_RECV_OVERHEAD", "1ns", 1);
	CHECK_EQ_INT(lgp_params_from_env(&p, err, sizeof(err)), 0);
	CHECK_EQ_U64(p.recv_overhead_ns, 1);

	/* Both bulk forms at once is refused; *p is left alone on error. */
	setenv("LOGGP_BULK_GAP", "1ns/B", 1);
	memset(&p, 0, sizeof(p));
	rc = lgp_params_from_env(&p, err, sizeof(err));
	CHECK_EQ_INT(rc, -EINVAL);
	CHECK_STR(err, "bad value '50MB/s' for LOGGP_BANDWIDTH: expected "
		  "LOGGP_BANDWIDTH or LOGGP_BULK_GAP, not both");
	CHECK(!lgp_params_active(&p));
	unsetenv("LOGGP_BANDWIDTH");
	CHECK_EQ_INT(lgp_params_from_env(&p, err, sizeof(err)), 0);
	CHECK_EQ_U64(p.bulk_gap_fs, 1000000);

	/* Set but empty is a bad value, not "unset". */
	setenv("LOGGP_LATENCY", "", 1);
	rc = lgp_params_from_env(&p, err, sizeof(err));
	CHECK_EQ_INT(rc, -EINVAL);
	CHECK(strncmp(err, "bad value '' for LOGGP_LATENCY: expected ",
		      41) == 0);
	CHECK_EQ_U64(p.latency_ns, 4500);

	setenv("LOGGP_LATENCY", "10", 1);
	CHECK_EQ_INT(lgp_params_from_env(&p, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "'10' for LOGGP_LATENCY") != NULL);
	setenv("LOGGP_LATENCY", "99999999999999s", 1);
	CHECK_EQ_INT(lgp_params_from_env(&p, err, sizeof(err)), -ERANGE);

	/* The first bad knob in enum order is the one reported. */
	setenv("LOGGP_GAP", "-1us", 1);
	CHECK_EQ_INT(lgp_params_from_env(&p, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "for LOGGP_GAP:") != NULL);
	env_clear();
}

int main(void)
{
	test_parse_table();
	test_messages();
	test_names();
	test_params();
	test_env();
	return check_done("test_knob");
}

/* SPDX-License-Identifier: MIT */
/* Unit tests of option parsing, knob parsing and the MAC table. */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "wire_conf.h"
#include "wire_mac.h"

#define ARGC(a) ((int)(sizeof(a) / sizeof((a)[0])))

static char err[512];

static int parse(struct wire_conf *c, int argc, char **argv)
{
	return wire_conf_parse(c, argc, argv, err, sizeof(err));
}

static void test_defaults(void)
{
	struct wire_conf c;

	CHECK_EQ_INT(parse(&c, 0, NULL), 0);
	CHECK_EQ_INT(c.mode, WIRE_MODE_SWITCH);
	CHECK(!c.control_path && !c.stats_json && !c.metrics_host[0]);
	CHECK_EQ_U64(c.shape.latency_ns, 0);
	CHECK_EQ_U64(c.shape.bulk_gap_fs, 0);
	CHECK_EQ_U64(c.shape.queue_pkts, 8192);
	CHECK_EQ_U64(c.shape.queue_bytes, 16ULL << 20);
	CHECK_EQ_U64(c.shape.burst_bytes, 65536);
	CHECK_EQ_U64(c.queue_capacity, 8192);
	CHECK_EQ_U64(c.idle_sleep_ns, 20000);
	CHECK(c.shape.loss == 0.0);
}

static void test_all_options(void)
{
	char *argv[] = {
		"--mode", "pair", "--control", "/run/x.sock",
		"--metrics=127.0.0.1:9477", "--stats-json", "/tmp/s.json",
		"--latency", "1ms", "--jitter=10us", "--gap", "2us",
		"--bandwidth", "100Mbit/s", "--burst", "3000",
		"--queue-pkts", "20000", "--queue-bytes", "1000000",
		"--loss", "0.01", "--seed", "9", "--jitter-reorder",
		"--idle-sleep", "0ns",
	};
	struct wire_conf c;

	CHECK_EQ_INT(parse(&c, ARGC(argv), argv), 0);
	CHECK_STR(err, "");
	CHECK_EQ_INT(c.mode, WIRE_MODE_PAIR);
	CHECK_STR(c.control_path, "/run/x.sock");
	CHECK_STR(c.metrics_host, "127.0.0.1");
	CHECK_EQ_INT(c.metrics_port, 9477);
	CHECK_STR(c.stats_json, "/tmp/s.json");
	CHECK_EQ_U64(c.shape.latency_ns, 1000000);
	CHECK_EQ_U64(c.shape.jitter_ns, 10000);
	CHECK_EQ_U64(c.shape.gap_ns, 2000);
	CHECK_EQ_U64(c.shape.bulk_gap_fs, 80000000);	/* 80 ns/B */
	CHECK_EQ_U64(c.shape.burst_bytes, 3000);
	CHECK_EQ_U64(c.shape.queue_pkts, 20000);
	CHECK_EQ_U64(c.queue_capacity, 20000);	/* grows to queue_pkts */
	CHECK_EQ_U64(c.shape.queue_bytes, 1000000);
	CHECK(c.shape.loss == 0.01);
	CHECK_EQ_U64(c.seed, 9);
	CHECK_EQ_INT(c.jitter_reorder, 1);
	CHECK_EQ_U64(c.idle_sleep_ns, 0);
}

/* Each bad command line fails with a message starting with want. */
static void bad(const char *want, int argc, char **argv)
{
	struct wire_conf c;

	CHECK_EQ_INT(parse(&c, argc, argv), -EINVAL);
	if (!CHECK(!strncmp(err, want, strlen(want))))
		fprintf(stderr, "    got '%s'\n", err);
	CHECK(!strchr(err, '\n'));
}

static void test_errors(void)
{
	char *a1[] = { "--latency", "-5us" };
	char *a2[] = { "--latency", "5parsecs" };
	char *a3[] = { "--frobnicate", "1" };
	char *a4[] = { "--latency" };
	char *a5[] = { "--bandwidth", "1Gbit/s", "--bulk-gap", "1ns/B" };
	char *a6[] = { "--mode", "hub" };
	char *a7[] = { "--metrics", "9477" };
	char *a8[] = { "--queue-pkts", "0" };
	char *a9[] = { "--loss", "1.5" };
	char *a10[] = { "--burst", "-1" };
	char *a11[] = { "--queue-pkts", "100", "--queue-capacity", "50" };
	char *a12[] = { "latency" };
	char *a13[] = { "--bandwidth", "0Mbit/s" };
	char *a14[] = { "--latency", "10" };

	bad("bad value '-5us' for --latency: expected <number>{ns|us|ms|s}",
	    ARGC(a1), a1);
	bad("bad value '5parsecs' for --latency: expected", ARGC(a2), a2);
	bad("unknown option '--frobnicate': expected one of --mode",
	    ARGC(a3), a3);
	bad("missing value for --latency", ARGC(a4), a4);
	bad("--bandwidth and --bulk-gap set the same knob", ARGC(a5), a5);
	bad("bad value 'hub' for --mode: expected switch or pair",
	    ARGC(a6), a6);
	bad("bad value '9477' for --metrics: expected HOST:PORT", ARGC(a7), a7);
	bad("bad value '0' for --queue-pkts: expected an integer of at least 1",
	    ARGC(a8), a8);
	bad("bad value '1.5' for --loss: expected a probability from 0 to 1",
	    ARGC(a9), a9);
	bad("bad value '-1' for --burst: expected a non-negative integer",
	    ARGC(a10), a10);
	bad("--queue-pkts 100 exceeds --queue-capacity 50", ARGC(a11), a11);
	bad("unexpected argument 'latency'", ARGC(a12), a12);
	bad("bad value '0Mbit/s' for --bandwidth: expected", ARGC(a13), a13);
	bad("bad value '10' for --latency", ARGC(a14), a14);
}

/* The delay distribution: the shim's settings, under the options' names. */
static void test_distribution(void)
{
	char *ok[] = { "--latency-dist", "normal:20us", "--latency-corr=0.25",
		       "--seed", "7" };
	char *b1[] = { "--latency-dist", "gauss:20us" };
	char *b2[] = { "--latency-dist", "normal:20us", "--latency-corr", "2" };
	char *b3[] = { "--latency-corr", "0.5" };
	char *b4[] = { "--latency-dist", "empirical:/nonexistent/delays" };
	struct wire_conf c;

	CHECK_EQ_INT(parse(&c, ARGC(ok), ok), 0);
	CHECK_EQ_INT(c.dist->dist.shape, LGP_DIST_NORMAL);
	CHECK_EQ_U64(c.dist->dist.spread_ns, 20000);
	CHECK(c.dist->dist.rho == 0.25);
	CHECK_EQ_U64(c.dist->seed, 7);
	CHECK_STR(c.dist->spec, "normal:20us");
	CHECK_STR(c.dist->corr, "0.25");
	wire_conf_fini(&c);
	CHECK(c.dist == NULL);
	bad("bad value 'gauss:20us' for --latency-dist: expected constant, "
	    "uniform:TIME, normal:TIME, pareto:TIME, paretonormal:TIME or "
	    "empirical:FILE, TIME as <number>{ns|us|ms|s}", ARGC(b1), b1);
	bad("bad value '2' for --latency-corr: expected a number from 0 to 1",
	    ARGC(b2), b2);
	bad("bad value '0.5' for --latency-corr: expected it with a "
	    "--latency-dist other than constant", ARGC(b3), b3);
	CHECK_EQ_INT(parse(&c, ARGC(b4), b4), -ENOENT);
	CHECK_STR(err, "cannot read the delays of --latency-dist "
		  "'/nonexistent/delays': No such file or directory");
}

static void test_knob_table(void)
{
	struct wire_shape s;
	int k;

	wire_shape_default(&s);
	for (k = 0; k < WIRE_KNOB_COUNT; k++) {
		CHECK_EQ_INT(wire_knob_by_key(wire_knob_key(k)), k);
		CHECK_EQ_INT(wire_knob_by_option(wire_knob_option(k)), k);
		CHECK(strstr(wire_knob_keys(), wire_knob_key(k)) != NULL);
	}
	CHECK_EQ_INT(wire_knob_by_key("overhead"), -1);
	CHECK_EQ_INT(wire_shape_parse(&s, WIRE_KNOB_BULK_GAP, "bulk_gap",
				      "0ns/B", err, sizeof(err)), 0);
	CHECK_EQ_U64(s.bulk_gap_fs, 0);
	CHECK_EQ_INT(wire_shape_parse(&s, WIRE_KNOB_BANDWIDTH, "bandwidth",
				      "1GB/s", err, sizeof(err)), 0);
	CHECK_EQ_U64(s.bulk_gap_fs, 1000000);
	CHECK_EQ_INT(wire_shape_parse(&s, WIRE_KNOB_LOSS, "loss", "1e-3", err,
				      sizeof(err)), 0);
	CHECK(s.loss == 0.001);
}

static void test_mac(void)
{
	static struct wire_mac_table t;
	uint8_t a[6] = { 0x02, 0, 0, 0, 0, 1 };
	uint8_t b[6] = { 0x02, 0, 0, 0, 0, 2 };
	uint8_t bc[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint8_t m[6];
	unsigned int i, found = 0;

	wire_mac_init(&t);
	CHECK_EQ_INT(wire_mac_lookup(&t, a), -1);
	wire_mac_learn(&t, a, 3);
	wire_mac_learn(&t, bc, 1);
	CHECK_EQ_INT(wire_mac_lookup(&t, a), 3);
	CHECK_EQ_INT(wire_mac_lookup(&t, b), -1);
	CHECK_EQ_INT(wire_mac_lookup(&t, bc), -1);
	CHECK(wire_mac_is_group(bc) && !wire_mac_is_group(a));
	wire_mac_learn(&t, a, 5);	/* the host moved */
	CHECK_EQ_INT(wire_mac_lookup(&t, a), 5);
	/* many stations: nearly all stay learned */
	for (i = 0; i < 2000; i++) {
		m[0] = 0x02; m[1] = 0; m[2] = 0; m[3] = (uint8_t)(i >> 8);
		m[4] = (uint8_t)i; m[5] = 7;
		wire_mac_learn(&t, m, (uint16_t)(i % 16));
	}
	for (i = 0; i < 2000; i++) {
		m[0] = 0x02; m[1] = 0; m[2] = 0; m[3] = (uint8_t)(i >> 8);
		m[4] = (uint8_t)i; m[5] = 7;
		found += wire_mac_lookup(&t, m) == (int)(i % 16);
	}
	CHECK(found >= 1990);
}

int main(void)
{
	test_defaults();
	test_all_options();
	test_errors();
	test_distribution();
	test_knob_table();
	test_mac();
	return check_done("test_wire_conf");
}

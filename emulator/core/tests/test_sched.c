/* SPDX-License-Identifier: MIT */
/*
 * Unit test of the schedule (lgp/sched.h): steps from TIME KNOB VALUE lines
 * on top of the base knobs, the start line, the origin on a clock, the step
 * due at a time, and the one-line refusals.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "lgp/sched.h"

static char path[] = "/tmp/lgp_test_sched_XXXXXX";

static int load(struct lgp_sched *s, const char *text, const struct lgp_params *base,
		char *err, size_t len)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fputs(text, f);
	fclose(f);
	return lgp_sched_load(s, path, base, err, len);
}

static void test_steps(void)
{
	struct lgp_params base = { .gap_ns = 7 };
	struct lgp_sched s;
	char err[LGP_KNOB_ERRLEN];

	CHECK_EQ_INT(load(&s, "# c\n\n0s latency 10us\n2s latency 200us\n2s bandwidth 1GB/s\n"
			  "  3500ms   overhead 1us\n", &base, err, sizeof(err)), 0);
	CHECK_EQ_U64(s.steps, 3);
	CHECK(!s.has_start);
	/* step 0: the base and the lines at 0 */
	CHECK_EQ_U64(s.step[0].params.latency_ns, 10000);
	CHECK_EQ_U64(s.step[0].params.gap_ns, 7);
	/* a step keeps what it does not name */
	CHECK_EQ_U64(s.step[1].at_ns, 2000000000ULL);
	CHECK_EQ_U64(s.step[1].params.latency_ns, 200000);
	CHECK_EQ_U64(s.step[1].params.bulk_gap_fs, 1000000);
	CHECK_EQ_U64(s.step[2].params.latency_ns, 200000);
	CHECK_EQ_U64(s.step[2].params.send_overhead_ns, 1000);
	CHECK_EQ_U64(s.step[2].params.recv_overhead_ns, 1000);
	CHECK_EQ_U64(s.peak.latency_ns, 200000);
	CHECK_EQ_U64(s.peak.gap_ns, 7);
	/* no start: time 0 is now; steps fall due at their times from it */
	CHECK(lgp_sched_origin(&s, 500, 123) == 500);
	CHECK_EQ_U64(lgp_sched_due(&s, 500, 1), 2000000500ULL);
	CHECK_EQ_U64(lgp_sched_due(&s, 500, 3), UINT64_MAX);
	CHECK_EQ_U64(lgp_sched_step_at(&s, 500, 0, 2000000499ULL), 0);
	CHECK_EQ_U64(lgp_sched_step_at(&s, 500, 0, 2000000500ULL), 1);
	CHECK_EQ_U64(lgp_sched_step_at(&s, 500, 0, UINT64_MAX), 2);
	lgp_sched_fini(&s);
}

static void test_start(void)
{
	struct lgp_params base = { 0 };
	struct lgp_sched s;
	char err[LGP_KNOB_ERRLEN];

	CHECK_EQ_INT(load(&s, "start 1000000000\n1s gap 1us\n", &base, err, sizeof(err)), 0);
	CHECK(s.has_start);
	/* realtime 3 s at clock 100: the start was 2 s before, below the clock's zero */
	CHECK(lgp_sched_origin(&s, 100, 3000000000ULL) == 100 - 2000000000LL);
	CHECK_EQ_U64(lgp_sched_due(&s, 100 - 2000000000LL, 1), 0);
	/* a start ahead of the clock */
	CHECK(lgp_sched_origin(&s, 100, 999999000ULL) == 1100);
	lgp_sched_fini(&s);
}

static void refused(const char *text, int ret, const char *msg)
{
	struct lgp_params base = { 0 };
	struct lgp_sched s;
	char err[LGP_KNOB_ERRLEN], want[LGP_KNOB_ERRLEN];

	CHECK_EQ_INT(load(&s, text, &base, err, sizeof(err)), ret);
	snprintf(want, sizeof(want), "%s '%s': %s", "LOGGP_SCHEDULE", path, msg);
	CHECK_STR(strstr(err, "LOGGP_SCHEDULE") ? strstr(err, "LOGGP_SCHEDULE") : err, want);
	CHECK_EQ_U64(s.steps, 0);
}

int main(void)
{
	int fd = mkstemp(path);

	if (fd < 0)
		return 1;
	test_steps();
	test_start();
	refused("0s latency 1us\n2s latency 2us\n1s latency 3us\n", -EINVAL,
		"time '1s' comes before the previous step's: expected times in order");
	refused("1s latancy 1us\n", -EINVAL, "unknown knob 'latancy': expected one of overhead, "
		"send_overhead, recv_overhead, gap, latency, bulk_gap, bandwidth");
	refused("1s latency 1\n", -EINVAL, "bad value '1' for latency: expected "
		"<number>{ns|us|ms|s}, e.g. 10us or 2.5ms");
	refused("1s latency 99999999999999999999s\n", -ERANGE, "bad value "
		"'99999999999999999999s' for latency: expected <number>{ns|us|ms|s}, e.g. 10us or "
		"2.5ms (out of range)");
	refused("1x latency 1us\n", -EINVAL, "bad time '1x': expected <number>{ns|us|ms|s}, "
		"e.g. 10us or 2.5ms");
	refused("1s bandwidth 1GB/s\n1s bulk_gap 1ns/B\n", -EINVAL,
		"bulk_gap and bandwidth in one step: expected one of them");
	refused("0s latency 1us\nstart 5\n", -EINVAL, "start '5' after a step or a start: "
		"expected 'TIME KNOB VALUE' (e.g. '2s latency 200us') or 'start UNIX_NS' before them");
	refused("start -5\n", -EINVAL, "bad start '-5': expected nanoseconds since the epoch "
		"(CLOCK_REALTIME), a whole number");
	refused("1s latency 1 us\n", -EINVAL, "expected 'TIME KNOB VALUE' (e.g. '2s latency "
		"200us') or 'start UNIX_NS' before them");
	unlink(path);
	return check_done("test_sched");
}

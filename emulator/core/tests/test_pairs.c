/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of a pair table's line parser (lgp/pairs.h): blanks and
 * comments, the count, a pair, and the lines refused.
 */
#include <errno.h>
#include <stdint.h>

#include "check.h"
#include "lgp/pairs.h"

static void test_kinds(void)
{
	uint64_t v[5] = { 0 };

	CHECK_EQ_INT(lgp_pairs_line("", v), LGP_PAIRS_BLANK);
	CHECK_EQ_INT(lgp_pairs_line("  \t", v), LGP_PAIRS_BLANK);
	CHECK_EQ_INT(lgp_pairs_line("# loggp pair table", v), LGP_PAIRS_BLANK);
	CHECK_EQ_INT(lgp_pairs_line("\r", v), LGP_PAIRS_BLANK);
	CHECK_EQ_INT(lgp_pairs_line("ranks 4", v), LGP_PAIRS_COUNT);
	CHECK_EQ_U64(v[0], 4);
	CHECK_EQ_INT(lgp_pairs_line("0 2 50000 7 1000000\r", v), LGP_PAIRS_PAIR);
	CHECK_EQ_U64(v[0], 0);
	CHECK_EQ_U64(v[1], 2);
	CHECK_EQ_U64(v[2], 50000);
	CHECK_EQ_U64(v[3], 7);
	CHECK_EQ_U64(v[4], 1000000);
}

static void test_refused(void)
{
	static const char *const bad[] = {
		"ranks 0", "ranks", "ranks -1", "ranks 4 5", "0 1 2 3",
		"0 1 2 3 4 5", "0 1 50us 0 0", "0 1 -5 0 0", "a b c d e",
		"0 1 99999999999999999999 0 0",
	};
	uint64_t v[5];
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (!CHECK(lgp_pairs_line(bad[i], v) == -EINVAL))
			fprintf(stderr, "    accepted '%s'\n", bad[i]);
}

int main(void)
{
	test_kinds();
	test_refused();
	return check_done("test_pairs");
}

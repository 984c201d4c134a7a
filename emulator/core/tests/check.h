/* SPDX-License-Identifier: MIT */
/*
 * Minimal assertions for the core's unit tests: a failed check prints
 * file:line and the values, and the program carries on so one run shows
 * every failure.  check_done() prints "<name>: N passed, M failed" and
 * gives the exit status.
 */
#ifndef LGP_CHECK_H
#define LGP_CHECK_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static unsigned int check_passed;
static unsigned int check_failed;

static inline int check_report(int ok, const char *file, int line,
			       const char *expr)
{
	if (ok) {
		check_passed++;
	} else {
		check_failed++;
		fprintf(stderr, "%s:%d: check failed: %s\n", file, line, expr);
	}
	return ok;
}

#define CHECK(cond) check_report(!!(cond), __FILE__, __LINE__, #cond)

#define CHECK_EQ_U64(a, b) do {						\
	uint64_t check_a_ = (a), check_b_ = (b);			\
	if (!check_report(check_a_ == check_b_, __FILE__, __LINE__,	\
			  #a " == " #b))				\
		fprintf(stderr, "    %" PRIu64 " != %" PRIu64 "\n",	\
			check_a_, check_b_);				\
} while (0)

#define CHECK_EQ_INT(a, b) do {						\
	long long check_a_ = (a), check_b_ = (b);			\
	if (!check_report(check_a_ == check_b_, __FILE__, __LINE__,	\
			  #a " == " #b))				\
		fprintf(stderr, "    %lld != %lld\n", check_a_, check_b_);	\
} while (0)

#define CHECK_STR(a, b) do {						\
	const char *check_a_ = (a), *check_b_ = (b);			\
	if (!check_report(check_a_ && check_b_ &&			\
			  !strcmp(check_a_, check_b_),			\
			  __FILE__, __LINE__, #a " equals " #b))		\
		fprintf(stderr, "    '%s' != '%s'\n",			\
			check_a_ ? check_a_ : "(null)",			\
			check_b_ ? check_b_ : "(null)");		\
} while (0)

static inline int check_done(const char *name)
{
	printf("%s: %u passed, %u failed\n", name, check_passed, check_failed);
	return check_failed ? 1 : 0;
}

#endif /* LGP_CHECK_H */

/* SPDX-License-Identifier: MIT */
/*
 * wl_opt.c: option values of the workload programs, parsed in full.
 *
 * A value that is not a whole number, has trailing junk, or lies outside
 * [min, max] is refused with one line on stderr (rank 0 only) naming the
 * option and the accepted values; the caller exits WL_EXIT_USAGE.  A NULL
 * arg means getopt found the option without its value.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <getopt.h>

#include "wl.h"

static int wl_opt_parse(const char *arg, bool sized, int64_t *out)
{
	static const struct {
		const char *suffix;
		int64_t mult;
	} units[] = {
		{ "", 1 }, { "B", 1 },
		{ "K", 1 << 10 }, { "k", 1 << 10 }, { "KiB", 1 << 10 },
		{ "M", 1 << 20 }, { "m", 1 << 20 }, { "MiB", 1 << 20 },
	};
	char *end;
	long long v;
	size_t i;

	if (!arg || !*arg || *arg == '-' || *arg == '+' || *arg == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoll(arg, &end, 10);
	if (errno || end == arg)
		return -EINVAL;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix))
			continue;
		if (i > 0 && !sized)
			return -EINVAL;
		if (v > INT64_MAX / units[i].mult)
			return -ERANGE;
		*out = v * units[i].mult;
		return 0;
	}
	return -EINVAL;
}

static int wl_opt_value(const struct wl_prog *p, int opt, const char *arg,
			int64_t min, int64_t max, bool sized, int64_t *out)
{
	int64_t v = 0;

	if (!wl_opt_parse(arg, sized, &v) && v >= min && v <= max) {
		*out = v;
		return 0;
	}
	if (p->rank)
		return -EINVAL;
	if (arg)
		fprintf(stderr, "%s: bad value '%s' for -%c: ", p->name, arg, opt);
	else
		fprintf(stderr, "%s: option -%c needs a value: ", p->name, opt);
	if (sized)
		fprintf(stderr, "expected a size in bytes from %" PRId64 " to %" PRId64
			" (suffix K or M for KiB or MiB)\n", min, max);
	else
		fprintf(stderr, "expected an integer from %" PRId64 " to %" PRId64 "\n",
			min, max);
	return -EINVAL;
}

int wl_opt_int(const struct wl_prog *p, int opt, const char *arg,
	       int64_t min, int64_t max, int64_t *out)
{
	return wl_opt_value(p, opt, arg, min, max, false, out);
}

int wl_opt_size(const struct wl_prog *p, int opt, const char *arg,
		int64_t min, int64_t max, int64_t *out)
{
	return wl_opt_value(p, opt, arg, min, max, true, out);
}

int wl_opt_per_rank(const struct wl_prog *p, int opt, int64_t per_rank, int64_t max_total,
		    const char *what)
{
	if (per_rank <= max_total / p->nranks)
		return 0;
	if (!p->rank)
		fprintf(stderr, "%s: bad value %lld for -%c: at most %lld %s in all\n",
			p->name, (long long)per_rank, opt, (long long)max_total, what);
	return -EINVAL;
}

int wl_opt_unknown(const struct wl_prog *p, int opt)
{
	if (!p->rank)
		fprintf(stderr, "%s: unknown option -%c: accepted options are %s\n",
			p->name, opt, p->options);
	return -EINVAL;
}

int wl_opt_extra(const struct wl_prog *p, const char *arg)
{
	if (!p->rank)
		fprintf(stderr, "%s: unexpected argument '%s': accepted options are %s\n",
			p->name, arg, p->options);
	return -EINVAL;
}

int wl_opt_getopt(const struct wl_prog *p, int argc, char **argv, const char *optstring,
		  const struct option *longopts, const char *usage, wl_opt_fn opt, void *ctx)
{
	const char *arg;
	int c, ret;

	opterr = 0;
	while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		arg = optarg;
		if (c == ':') {
			c = optopt;
			arg = NULL;
		}
		if (c == '?' && !optopt) {
			if (!p->rank)	/* an unknown long option */
				fprintf(stderr, "%s: unknown option '%s': accepted options are %s\n",
					p->name, argv[optind - 1], p->options);
			return -EINVAL;
		}
		if (c == '?')
			return wl_opt_unknown(p, optopt);
		if (c == 'h') {
			if (!p->rank)
				fputs(usage, stdout);
			return 1;
		}
		ret = opt(p, c, arg, ctx);
		if (ret)
			return ret;
	}
	if (optind < argc)
		return wl_opt_extra(p, argv[optind]);
	return 0;
}

int wl_opt_word(const struct wl_prog *p, int opt, const char *arg, const char *const *names,
		int n, const char *expect, int *out)
{
	int i;

	for (i = 0; arg && i < n; i++) {
		if (!strcmp(arg, names[i])) {
			*out = i;
			return 0;
		}
	}
	if (!p->rank) {
		if (arg)
			fprintf(stderr, "%s: bad value '%s' for -%c: expected %s\n",
				p->name, arg, opt, expect);
		else
			fprintf(stderr, "%s: option -%c needs a value: expected %s\n",
				p->name, opt, expect);
	}
	return -EINVAL;
}

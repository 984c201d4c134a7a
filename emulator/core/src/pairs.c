/* SPDX-License-Identifier: MIT */
/* One line of a pair table (lgp/pairs.h). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lgp/pairs.h"

/* Whole numbers separated by blanks: how many were read (at most n), -1 for more. */
static int lgp_pairs_numbers(const char *s, uint64_t *v, int n)
{
	char *end;
	int i;

	for (i = 0; i < n; i++) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!isdigit((unsigned char)*s))
			break;
		errno = 0;
		v[i] = strtoull(s, &end, 10);
		if (errno)
			return -1;
		s = end;
	}
	while (*s == ' ' || *s == '\t' || *s == '\r')
		s++;
	return *s ? -1 : i;
}

int lgp_pairs_line(const char *line, uint64_t v[5])
{
	while (*line == ' ' || *line == '\t')
		line++;
	if (!*line || *line == '#' || *line == '\r')
		return LGP_PAIRS_BLANK;
	if (!strncmp(line, "ranks ", 6))
		return lgp_pairs_numbers(line + 6, v, 1) == 1 && v[0] ? LGP_PAIRS_COUNT : -EINVAL;
	return lgp_pairs_numbers(line, v, 5) == 5 ? LGP_PAIRS_PAIR : -EINVAL;
}

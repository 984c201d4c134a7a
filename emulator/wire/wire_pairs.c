/* SPDX-License-Identifier: MIT */
/* A network's per-pair delays on the wire (see wire_pairs.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lgp/pairs.h>

#include "wire_pairs.h"

#define WIRE_PAIRS_LINE	256

struct wire_pairs *wire_pairs_new(const char *table, unsigned int nports,
				  int *rc, char *err, size_t errlen)
{
	struct wire_pairs *p;
	char line[WIRE_PAIRS_LINE];
	unsigned int n = 0, ports = 0;
	const char *s = table;
	struct wire_pair *w;
	uint64_t v[5];
	size_t len;
	int kind;

	p = calloc(1, sizeof(*p) + (size_t)nports * nports * sizeof(p->pair[0]));
	if (!p) {
		snprintf(err, errlen, "out of memory for pairs of %u ports", nports);
		*rc = -ENOMEM;
		return NULL;
	}
	p->nports = nports;
	while (*s) {
		len = strcspn(s, "\n");
		n++;
		if (len >= sizeof(line)) {
			snprintf(err, errlen, "line %u of pairs is too long: expected "
				 LGP_PAIRS_FORMS, n);
			goto bad;
		}
		memcpy(line, s, len);
		line[len] = '\0';
		s += len + (s[len] == '\n');
		kind = lgp_pairs_line(line, v);
		if (kind == LGP_PAIRS_BLANK)
			continue;
		if (kind == LGP_PAIRS_COUNT && !ports && v[0] <= nports) {
			ports = (unsigned int)v[0];
			continue;
		}
		if (kind != LGP_PAIRS_PAIR || !ports || v[0] >= ports ||
		    v[1] >= ports) {
			snprintf(err, errlen, "bad line %u of pairs '%.60s': "
				 "expected " LGP_PAIRS_FORMS ", N at most this "
				 "wire's %u ports", n, line, nports);
			goto bad;
		}
		p->pair[v[0] * nports + v[1]] =
			(struct wire_pair){ v[2], v[3], v[4] };
	}
	if (n && !ports) {
		snprintf(err, errlen, "no 'ranks N' line in pairs: expected "
			 LGP_PAIRS_FORMS);
		goto bad;
	}
	for (w = p->pair; w < p->pair + (size_t)nports * nports; w++)
		p->count += w->latency_ns || w->gap_ns || w->bulk_gap_fs;
	return p;
bad:
	free(p);
	*rc = -EINVAL;
	return NULL;
}

void wire_pairs_free(struct wire_pairs *p)
{
	free(p);
}

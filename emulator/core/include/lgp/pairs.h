/* SPDX-License-Identifier: MIT */
/*
 * One line of a pair table: a network's per-pair latency, gap and bulk gap
 * (docs/design.md, "Topology"), as loggp/plan/topology.py writes it:
 *     # comment
 *     ranks N
 *     SRC DST LATENCY_NS GAP_NS BULK_GAP_FS
 * The fabric shim reads one from LOGGP_TOPOLOGY (pairs of ranks, keeping
 * its own row), the wire from its control socket's "pairs" request (pairs
 * of ports, the whole table).  This is the one parser of a line; each
 * reader keeps what it needs and words its own errors around
 * LGP_PAIRS_FORMS.
 */
#ifndef LGP_PAIRS_H
#define LGP_PAIRS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LGP_PAIRS_FORMS	"'ranks N', then lines SRC DST LATENCY_NS GAP_NS BULK_GAP_FS " \
			"(loggp/plan/topology.py writes it)"

enum lgp_pairs_kind {
	LGP_PAIRS_BLANK,	/* empty or a comment */
	LGP_PAIRS_COUNT,	/* 'ranks N': v[0] = N, at least 1 */
	LGP_PAIRS_PAIR,		/* v[0..4] = SRC DST LATENCY_NS GAP_NS BULK_GAP_FS */
};

/*
 * What line (without its newline) is, its numbers in v; -EINVAL for
 * anything else.  Ranges against N are the caller's: only it knows N.
 */
int lgp_pairs_line(const char *line, uint64_t v[5]);

#ifdef __cplusplus
}
#endif

#endif /* LGP_PAIRS_H */

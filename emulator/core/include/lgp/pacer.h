/* SPDX-License-Identifier: MIT */
/*
 * Injection pacing of one endpoint for g and G (docs/design.md, "LogGP
 * semantics"): a message of n bytes that is ready at time t starts leaving
 * at start = max(t, port_free), has fully left at start + n*G, and the
 * port is free again at start + max(g, n*G).
 *
 * Not thread-safe: the owner serialises calls (the endpoint's lock).
 */
#ifndef LGP_PACER_H
#define LGP_PACER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct lgp_pacer {
	uint64_t gap_ns;
	uint64_t bulk_gap_fs;
	uint64_t port_free_ns;
};

void lgp_pacer_init(struct lgp_pacer *p, uint64_t gap_ns, uint64_t bulk_gap_fs);

/* n * G in nanoseconds, rounded to nearest, saturating at UINT64_MAX. */
uint64_t lgp_bulk_ns(uint64_t bulk_gap_fs, uint64_t nbytes);

/*
 * Reserve the port for a message of nbytes ready at ready_ns.  Returns the
 * time the message has fully left (start + n*G); stores start in *start_ns
 * if not NULL.  Saturates instead of wrapping on overflow.
 */
uint64_t lgp_pacer_inject(struct lgp_pacer *p, uint64_t ready_ns,
			  uint64_t nbytes, uint64_t *start_ns);

#ifdef __cplusplus
}
#endif

#endif /* LGP_PACER_H */

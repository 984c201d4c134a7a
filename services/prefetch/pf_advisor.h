/*
 * pf_advisor.h: one advisor per open file (Mercury's advisor): it owns the
 * file's window (pf_window.h) and its back-end context, takes the
 * application's requests and turns them into fetches and releases.
 *
 * Threaded advisors queue requests and return at once (a full queue drops
 * the request and counts it); inline advisors advise in the caller's thread
 * before returning.  Every call is thread-safe.
 */
#ifndef PF_ADVISOR_H
#define PF_ADVISOR_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "pf_backend.h"
#include "pf_config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Counters shared by every advisor of a process (or a manager). */
struct pf_counters {
	atomic_ulong files;		/* advisors opened */
	atomic_ulong requests;		/* requests taken */
	atomic_ulong fetched;		/* blocks fetched */
	atomic_ulong released;		/* blocks released */
	atomic_ulong oversized;		/* requests larger than a block */
	atomic_ulong dropped;		/* requests lost to a full queue */
	atomic_ulong errors;		/* advisors that could not open */
	atomic_uint window_max;		/* most blocks one window held */
};

struct pf_advisor;

/*
 * Opens an advisor of e's file, open as fd at path, on a back-end, and gives
 * the hint ranges' advice.  NULL with a one-line message in err.
 */
struct pf_advisor *pf_advisor_open(const struct pf_entry *e, const struct pf_backend_ops *ops,
				   int fd, const char *path, int threaded,
				   struct pf_counters *cnt, char *err, size_t errlen);
void pf_advisor_request(struct pf_advisor *a, uint64_t off, uint64_t len);
/* Stops advising (the application advises this file itself); idempotent. */
void pf_advisor_detach(struct pf_advisor *a);
/* Finishes the queued requests, then frees the advisor. */
void pf_advisor_close(struct pf_advisor *a);

/* Appends the counters as JSON members ("files":N,...) to buf. */
int pf_counters_json(const struct pf_counters *c, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif

/*
 * pf_advisor.h: one advisor per open file (Mercury's advisor): it owns the
 * file's window (pf_window.h; or, for Adaptive entries and files the
 * application reads sequentially, its adaptive read-ahead, pf_adapt.h) and
 * its back-end context, takes the
 * application's requests and turns them into fetches and releases.
 *
 * Threaded advisors queue requests and return at once (a full queue drops
 * the request and counts it); inline advisors advise in the caller's thread
 * before returning.  Every call is thread-safe.
 */
#ifndef PF_ADVISOR_H
#define PF_ADVISOR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pf_backend.h"
#include "pf_config.h"

#ifdef __cplusplus
extern "C" {
#endif

struct pf_advisor;

/*
 * Opens an advisor of e's file, open as fd at path, on a back-end, and gives
 * the hint ranges' advice.  NULL with a one-line message in err.
 */
struct pf_advisor *pf_advisor_open(const struct pf_entry *e, const struct pf_backend_ops *ops,
				   int fd, const char *path, int threaded,
				   struct pf_counters *cnt, char *err, size_t errlen);
void pf_advisor_request(struct pf_advisor *a, uint64_t off, uint64_t len);
/* The back-end's cache serves the read (pf_backend_ops.serve): len, or -1. */
ssize_t pf_advisor_serve(struct pf_advisor *a, void *buf, uint64_t off, uint64_t len);
/* 1 when the back-end serves reads itself. */
int pf_advisor_serves(const struct pf_advisor *a);
/* The application said it reads sequentially: adaptive read-ahead from now
 * on (a sequential reader is what it predicts first). */
void pf_advisor_sequential(struct pf_advisor *a);
/* Stops advising (the application advises this file itself); idempotent. */
void pf_advisor_detach(struct pf_advisor *a);
/* Finishes the queued requests, then frees the advisor. */
void pf_advisor_close(struct pf_advisor *a);


#ifdef __cplusplus
}
#endif

#endif

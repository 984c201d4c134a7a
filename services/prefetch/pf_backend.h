/*
 * pf_backend.h: where an advisor's advice goes (README.md, "Back-ends").
 *
 * A back-end sees one open file as a context made by open() from the
 * application's descriptor (which open() may duplicate but never changes)
 * and its resolved path.  Every call is advice: a failure is counted, never
 * returned to the application.
 */
#ifndef PF_BACKEND_H
#define PF_BACKEND_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pf_config.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Counters shared by every advisor and back-end of a process (or a manager). */
struct pf_counters {
	atomic_ulong files;		/* advisors opened */
	atomic_ulong requests;		/* requests taken */
	atomic_ulong fetched;		/* blocks fetched */
	atomic_ulong released;		/* blocks released */
	atomic_ulong oversized;		/* requests larger than a block */
	atomic_ulong dropped;		/* requests lost to a full queue */
	atomic_ulong errors;		/* advisors that could not open */
	atomic_uint window_max;		/* most blocks one window held */
	atomic_ulong served;		/* reads served from a back-end's own cache */
	atomic_ulong missed;		/* reads it could not serve (read as usual) */
	atomic_ulong store_reads;	/* blocks the store back-end asked its servers for */
	atomic_ulong store_bytes;
	atomic_uint cache_max;		/* most blocks its cache held */
};

/* Appends the counters as JSON members ("files":N,...) to buf. */
int pf_counters_json(const struct pf_counters *c, char *buf, size_t len);

struct pf_backend_ops {
	const char *name;
	/* 0 and *ctx, *size; or -errno with a one-line message in err. */
	int (*open)(void **ctx, int fd, const char *path, uint64_t *size,
		    struct pf_counters *cnt, char *err, size_t errlen);
	/* A hint range's advice, at open: WillNeed files are read at random. */
	void (*advise)(void *ctx, enum pf_hint_kind kind, uint64_t off, uint64_t len);
	/* Start reading a block's extent; do not wait for it. */
	void (*fetch)(void *ctx, uint64_t off, uint64_t len);
	/* The extent has left the window. */
	void (*release)(void *ctx, uint64_t off, uint64_t len);
	void (*close)(void *ctx);
	/* Back-ends with a cache of their own: copies [off, off + len) from it
	 * (waiting for blocks still being fetched) and returns len, or -1 when
	 * some of it is not there.  NULL: the application reads as usual. */
	ssize_t (*serve)(void *ctx, void *buf, uint64_t off, uint64_t len);
};

/* posix_fadvise on a duplicate of the application's descriptor. */
extern const struct pf_backend_ops pf_pagecache_ops;

/*
 * The parallel file store (services/pfs) beneath its FUSE mount: blocks
 * read by the store's client library with asynchronous requests into a
 * cache in the process, from which the application's reads are served.
 * pf_pfs_setup() names the instance and where it is mounted (the process
 * connects at its first open); pf_pfs_claims() says whether a resolved path
 * is beneath that mount; pf_pfs_forked() forgets the parent's connection;
 * pf_pfs_exit() closes the connection when no file of it is open.
 */
extern const struct pf_backend_ops pf_pfs_ops;
int pf_pfs_setup(const char *instance, const char *mount, char *err, size_t errlen);
int pf_pfs_claims(const char *path);
void pf_pfs_forked(void);
void pf_pfs_exit(void);

#ifdef __cplusplus
}
#endif

#endif

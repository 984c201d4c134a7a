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

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pf_config.h"

#ifdef __cplusplus
extern "C" {
#endif

struct pf_backend_ops {
	const char *name;
	/* 0 and *ctx, *size; or -errno with a one-line message in err. */
	int (*open)(void **ctx, int fd, const char *path, uint64_t *size, char *err,
		    size_t errlen);
	/* A hint range's advice, at open: WillNeed files are read at random. */
	void (*advise)(void *ctx, enum pf_hint_kind kind, uint64_t off, uint64_t len);
	/* Start reading a block's extent; do not wait for it. */
	void (*fetch)(void *ctx, uint64_t off, uint64_t len);
	/* The extent has left the window. */
	void (*release)(void *ctx, uint64_t off, uint64_t len);
	void (*close)(void *ctx);
};

/* posix_fadvise on a duplicate of the application's descriptor. */
extern const struct pf_backend_ops pf_pagecache_ops;

#ifdef __cplusplus
}
#endif

#endif

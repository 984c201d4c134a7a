/*
 * backend_pagecache.c: the kernel page cache as the prefetcher's cache
 * (pf_backend.h).  The duplicate shares the application's open file
 * description, so FADV_RANDOM turns off the kernel's own read-ahead for the
 * application's reads; WILLNEED starts reading a block without waiting and
 * DONTNEED drops a block's clean pages.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pf_backend.h"
#include "pf_real.h"

struct pc_ctx {
	int fd;
};

static int pc_open(void **ctx, int fd, const char *path, uint64_t *size,
		   struct pf_counters *cnt, char *err, size_t errlen)
{
	struct stat st;
	struct pc_ctx *c = malloc(sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	c->fd = pf_real_dupfd(fd);
	if (c->fd < 0 || fstat(c->fd, &st) < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: cannot hold the file: %s", path, strerror(e));
		if (c->fd >= 0)
			pf_real_close(c->fd);
		free(c);
		return -e;
	}
	*size = (uint64_t)st.st_size;
	*ctx = c;
	return 0;
}

static void pc_advise(void *ctx, enum pf_hint_kind kind, uint64_t off, uint64_t len)
{
	static const int advice[] = {
		[PF_WILLNEED] = POSIX_FADV_RANDOM,
		[PF_SEQUENTIAL] = POSIX_FADV_SEQUENTIAL,
		[PF_RANDOM] = POSIX_FADV_RANDOM,
		[PF_NORMAL] = POSIX_FADV_NORMAL,
	};
	struct pc_ctx *c = ctx;
	pf_real_fadvise(c->fd, (off_t)off, (off_t)len, advice[kind]);
}

static void pc_fetch(void *ctx, uint64_t off, uint64_t len)
{
	struct pc_ctx *c = ctx;
	pf_real_fadvise(c->fd, (off_t)off, (off_t)len, POSIX_FADV_WILLNEED);
}

static void pc_release(void *ctx, uint64_t off, uint64_t len)
{
	struct pc_ctx *c = ctx;
	pf_real_fadvise(c->fd, (off_t)off, (off_t)len, POSIX_FADV_DONTNEED);
}

static void pc_close(void *ctx)
{
	struct pc_ctx *c = ctx;
	pf_real_close(c->fd);
	free(c);
}

const struct pf_backend_ops pf_pagecache_ops = {
	.name = "pagecache",
	.open = pc_open,
	.advise = pc_advise,
	.fetch = pc_fetch,
	.release = pc_release,
	.close = pc_close,
};

/*
 * backend_pfs.c: the parallel file store as the prefetcher's source
 * (pf_backend.h).  A hinted file beneath the store's FUSE mount is opened
 * again through the store's client library; a fetched block is one
 * asynchronous read (cut at stripe units by the library, each unit a
 * request to its server, so the shim's o, g, L and G apply and the servers
 * count it) into a buffer of this process; the application's reads that
 * fall inside fetched blocks are copied from there and never reach the
 * mount.  The cache holds exactly the window's blocks: fetch adds one,
 * release frees one (waiting for it if it is still in flight).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pf_backend.h"
#include "pfs.h"

/* Connected at the first hinted open, not at load: a process that forks
 * before it reads (rootio's instances) must not share its client. */
static pthread_mutex_t store_lock = PTHREAD_MUTEX_INITIALIZER;
static pfs_t *store;
static unsigned store_files;	/* files open through it; under store_lock */
static char instance_dir[PATH_MAX];
static char mount_dir[PATH_MAX];
static size_t mount_len;

struct ps_block {
	uint64_t off, len;
	char *buf;
	pfs_aio_t *aio;		/* NULL once waited for */
	ssize_t got;
	struct ps_block *next;
};

struct ps_ctx {
	pfs_file_t *f;
	struct pf_counters *cnt;
	pthread_mutex_t lock;
	struct ps_block *blocks;
	unsigned n;
};

int pf_pfs_setup(const char *instance, const char *mount, char *err, size_t errlen)
{
	if (!realpath(mount, mount_dir)) {
		snprintf(err, errlen, "store mount %s: %s", mount, strerror(errno));
		return -errno;
	}
	if (strlen(instance) >= sizeof(instance_dir)) {
		snprintf(err, errlen, "store %s: path too long", instance);
		return -ENAMETOOLONG;
	}
	strcpy(instance_dir, instance);
	mount_len = strlen(mount_dir);
	return 0;
}

int pf_pfs_claims(const char *path)
{
	return mount_len && strncmp(path, mount_dir, mount_len) == 0 && path[mount_len] == '/';
}

void pf_pfs_forked(void)
{
	pthread_mutex_init(&store_lock, NULL);
	store = NULL;	/* the parent's client: its progress thread is not here */
	store_files = 0;
}

void pf_pfs_exit(void)
{
	/* A file still open (a thread reading at exit) keeps it; the store
	 * library stops its progress thread at exit either way. */
	pthread_mutex_lock(&store_lock);
	if (store && !store_files) {
		pfs_disconnect(store);
		store = NULL;
	}
	pthread_mutex_unlock(&store_lock);
}

static pfs_t *connected(char *err, size_t errlen)
{
	pthread_mutex_lock(&store_lock);
	if (!store && pfs_connect(instance_dir, NULL, &store) < 0) {
		snprintf(err, errlen, "store %s: %s", instance_dir, pfs_errmsg());
		store = NULL;
	}
	pfs_t *p = store;
	pthread_mutex_unlock(&store_lock);
	return p;
}

static int ps_open(void **ctx, int fd, const char *path, uint64_t *size,
		   struct pf_counters *cnt, char *err, size_t errlen)
{
	struct pfs_attr st;
	pfs_t *p = connected(err, errlen);
	if (!p)
		return -EIO;
	struct ps_ctx *c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	int rc = pfs_open(p, path + mount_len, O_RDONLY, 0, &c->f);
	if (rc == 0 && (rc = pfs_fstat(c->f, &st)) < 0)
		pfs_close(c->f);
	if (rc < 0) {
		snprintf(err, errlen, "%s: through the store: %s", path, pfs_errmsg());
		free(c);
		return rc;
	}
	*size = st.size;
	c->cnt = cnt;
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_lock(&store_lock);
	store_files++;
	pthread_mutex_unlock(&store_lock);
	*ctx = c;
	return 0;
}

static void ps_advise(void *ctx, enum pf_hint_kind kind, uint64_t off, uint64_t len)
{
	/* The store has no read-ahead of its own to steer. */
}

/* Waits for b's read; under c->lock. */
static void settle(struct ps_block *b)
{
	if (b->aio) {
		b->got = pfs_aio_wait(b->aio);
		b->aio = NULL;
	}
}

static void ps_fetch(void *ctx, uint64_t off, uint64_t len)
{
	struct ps_ctx *c = ctx;
	struct ps_block *b = calloc(1, sizeof(*b));
	if (!b || !(b->buf = malloc(len))) {
		free(b);
		return;
	}
	b->off = off;
	b->len = len;
	if (pfs_aio_pread(c->f, b->buf, len, off, &b->aio) < 0) {
		free(b->buf);
		free(b);
		return;
	}
	atomic_fetch_add(&c->cnt->store_reads, 1);
	atomic_fetch_add(&c->cnt->store_bytes, len);
	pthread_mutex_lock(&c->lock);
	b->next = c->blocks;
	c->blocks = b;
	c->n++;
	unsigned cur = atomic_load(&c->cnt->cache_max);
	while (c->n > cur && !atomic_compare_exchange_weak(&c->cnt->cache_max, &cur, c->n))
		;
	pthread_mutex_unlock(&c->lock);
}

static void drop(struct ps_ctx *c, struct ps_block **at)
{
	struct ps_block *b = *at;
	settle(b);
	*at = b->next;
	c->n--;
	free(b->buf);
	free(b);
}

/* Releases every block that starts within [off, off + len). */
static void ps_release(void *ctx, uint64_t off, uint64_t len)
{
	struct ps_ctx *c = ctx;
	pthread_mutex_lock(&c->lock);
	for (struct ps_block **at = &c->blocks; *at;) {
		if ((*at)->off >= off && (*at)->off < off + len)
			drop(c, at);
		else
			at = &(*at)->next;
	}
	pthread_mutex_unlock(&c->lock);
}

static void ps_close(void *ctx)
{
	struct ps_ctx *c = ctx;
	pthread_mutex_lock(&c->lock);
	while (c->blocks)
		drop(c, &c->blocks);
	pthread_mutex_unlock(&c->lock);
	pthread_mutex_destroy(&c->lock);
	pfs_close(c->f);
	free(c);
	pthread_mutex_lock(&store_lock);
	store_files--;
	pthread_mutex_unlock(&store_lock);
}

static struct ps_block *holding(struct ps_ctx *c, uint64_t at)
{
	for (struct ps_block *b = c->blocks; b; b = b->next)
		if (at >= b->off && at < b->off + b->len)
			return b;
	return NULL;
}

static ssize_t ps_serve(void *ctx, void *buf, uint64_t off, uint64_t len)
{
	struct ps_ctx *c = ctx;
	ssize_t rc = (ssize_t)len;
	pthread_mutex_lock(&c->lock);
	for (uint64_t at = off; at < off + len;) {
		struct ps_block *b = holding(c, at);
		if (b)
			settle(b);
		if (!b || b->got != (ssize_t)b->len) {
			rc = -1;
			break;
		}
		at = b->off + b->len;
	}
	for (uint64_t at = off; rc >= 0 && at < off + len;) {
		struct ps_block *b = holding(c, at);
		uint64_t end = b->off + b->len < off + len ? b->off + b->len : off + len;
		memcpy((char *)buf + (at - off), b->buf + (at - b->off), end - at);
		at = end;
	}
	pthread_mutex_unlock(&c->lock);
	return rc;
}

const struct pf_backend_ops pf_pfs_ops = {
	.name = "pfs",
	.open = ps_open,
	.advise = ps_advise,
	.fetch = ps_fetch,
	.release = ps_release,
	.close = ps_close,
	.serve = ps_serve,
};

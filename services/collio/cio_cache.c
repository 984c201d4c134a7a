/*
 * cio_cache.c: an aggregator's cache file and its sync threads.
 *
 * The cache file is a sparse image of the global file (same offsets), named
 * <e10_cache_path>/<job>-<host>-<hash of the global file's full path>, so
 * the aggregators of one job on one host share it (their file domains never
 * overlap).  Written extents go to a queue (flush_immediate) or are kept
 * until a flush (flush_onclose); the sync threads copy queued extents to the
 * global file ind_wr_buffer_size bytes at a time with pread/pwrite only
 * (never MPI: the caller's MPI may not be thread-safe), and wait on a
 * condition variable when the queue is empty, so idle threads cost nothing.
 *
 * Locking: lock guards the queue, the kept list, busy, err and sync_s; the
 * file descriptors are set before the threads start and closed after they
 * stop.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cio.h"

struct cio_cache {
	int cfd, gfd;
	int flush;		/* enum cio_flush */
	int discard;
	int64_t chunk;
	char path[PATH_MAX];
	pthread_mutex_t lock;
	pthread_cond_t work;	/* queue not empty, or stopping */
	pthread_cond_t idle;	/* queue empty and nothing being copied */
	struct cio_flat queue;	/* extents to copy, taken from the front */
	size_t head;
	struct cio_flat kept;	/* flush_onclose: written, not yet queued */
	int busy;		/* extents being copied */
	int err;		/* first sync error not yet reported */
	int stop;
	double sync_s;		/* seconds the threads spent copying */
	int nthreads;
	pthread_t *threads;
};

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int copy_extent(struct cio_cache *c, char *buf, int64_t off, int64_t len)
{
	while (len > 0) {
		int64_t n = len < c->chunk ? len : c->chunk;
		ssize_t r = pread(c->cfd, buf, n, off), w = 0;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		for (ssize_t done = 0; done < r; done += w) {
			w = pwrite(c->gfd, buf + done, r - done, off + done);
			if (w < 0 && errno == EINTR) {
				w = 0;
				continue;
			}
			if (w <= 0)
				return w < 0 ? -errno : -ENOSPC;
		}
		off += r;
		len -= r;
	}
	return 0;
}

static void *sync_thread(void *arg)
{
	struct cio_cache *c = arg;
	char *buf = malloc(c->chunk);

	pthread_mutex_lock(&c->lock);
	for (;;) {
		struct cio_seg s;
		double t0;
		int ret;

		while (!c->stop && c->head == c->queue.n)
			pthread_cond_wait(&c->work, &c->lock);
		if (c->head == c->queue.n)
			break;
		s = c->queue.seg[c->head++];
		if (c->head == c->queue.n)	/* so no later extent merges into s */
			c->head = c->queue.n = 0;
		c->busy++;
		pthread_mutex_unlock(&c->lock);
		t0 = mono();
		ret = buf ? copy_extent(c, buf, s.off, s.len) : -ENOMEM;
		pthread_mutex_lock(&c->lock);
		c->sync_s += mono() - t0;
		if (ret && !c->err)
			c->err = ret;
		if (!--c->busy && c->head == c->queue.n)
			pthread_cond_broadcast(&c->idle);
	}
	pthread_mutex_unlock(&c->lock);
	free(buf);
	return NULL;
}

int cio_cache_open(struct cio_cache **out, const struct cio_hints *h, const char *gpath,
		   int gfd)
{
	const char *job = getenv("PMIX_NAMESPACE");
	char host[256] = "host";
	struct cio_cache *c = calloc(1, sizeof(*c));
	int ret;

	if (!c)
		return -ENOMEM;
	gethostname(host, sizeof(host) - 1);
	if (snprintf(c->path, sizeof(c->path), "%s/%s-%s-%016llx", h->cache_path,
		     job && *job ? job : "job", host,
		     (unsigned long long)fnv1a(gpath)) >= (int)sizeof(c->path)) {
		cio_warn("e10_cache_path=%s: too long for a cache file's name", h->cache_path);
		free(c);
		return -ENAMETOOLONG;
	}
	for (char *p = c->path + strlen(h->cache_path) + 1; *p; p++)
		if (*p == '/')
			*p = '_';
	c->cfd = open(c->path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (c->cfd < 0) {
		ret = -errno;
		cio_warn("cache file %s: %s", c->path, strerror(errno));
		free(c);
		return ret;
	}
	c->gfd = gfd;
	c->flush = h->flush;
	c->discard = h->discard;
	c->chunk = h->ind_wr_buffer_size;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->work, NULL);
	pthread_cond_init(&c->idle, NULL);
	c->threads = calloc(h->threads, sizeof(*c->threads));
	for (int i = 0; c->threads && i < h->threads; i++) {
		if (pthread_create(&c->threads[i], NULL, sync_thread, c))
			break;
		c->nthreads++;
	}
	if (!c->nthreads) {
		c->stop = 1;
		cio_cache_close(c);
		return -EAGAIN;
	}
	*out = c;
	return 0;
}

const char *cio_cache_path(const struct cio_cache *c)
{
	return c->path;
}

int cio_cache_write(struct cio_cache *c, const void *buf, int64_t len, int64_t off)
{
	const char *p = buf;
	int64_t o = off, n = len;
	int ret = 0;

	while (n > 0) {
		ssize_t w = pwrite(c->cfd, p, n, o);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -ENOSPC;
		p += w;
		o += w;
		n -= w;
	}
	if (c->flush == CIO_FLUSH_NONE)
		return 0;
	pthread_mutex_lock(&c->lock);
	if (c->flush == CIO_FLUSH_ONCLOSE) {
		ret = cio_flat_append(&c->kept, off, len);
	} else {
		ret = cio_flat_append(&c->queue, off, len);
		pthread_cond_signal(&c->work);
	}
	pthread_mutex_unlock(&c->lock);
	return ret;
}

int cio_cache_flush(struct cio_cache *c)
{
	int ret;

	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->kept.n; i++)
		cio_flat_append(&c->queue, c->kept.seg[i].off, c->kept.seg[i].len);
	c->kept.n = 0;
	pthread_cond_broadcast(&c->work);
	while (c->head < c->queue.n || c->busy)
		pthread_cond_wait(&c->idle, &c->lock);
	ret = c->err;
	c->err = 0;
	pthread_mutex_unlock(&c->lock);
	return ret;
}

int cio_cache_error(struct cio_cache *c)
{
	int ret;

	pthread_mutex_lock(&c->lock);
	ret = c->err;
	c->err = 0;
	pthread_mutex_unlock(&c->lock);
	return ret;
}

double cio_cache_sync_seconds(struct cio_cache *c)
{
	double s;

	pthread_mutex_lock(&c->lock);
	s = c->sync_s;
	c->sync_s = 0;
	pthread_mutex_unlock(&c->lock);
	return s;
}

int cio_cache_close(struct cio_cache *c)
{
	int ret;

	pthread_mutex_lock(&c->lock);
	c->stop = 1;
	pthread_cond_broadcast(&c->work);
	pthread_mutex_unlock(&c->lock);
	for (int i = 0; i < c->nthreads; i++)
		pthread_join(c->threads[i], NULL);
	ret = c->err;
	close(c->cfd);
	if (c->discard && unlink(c->path) && errno != ENOENT && !ret)
		ret = -errno;
	cio_flat_free(&c->queue);
	cio_flat_free(&c->kept);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->work);
	pthread_cond_destroy(&c->idle);
	free(c->threads);
	free(c);
	return ret;
}

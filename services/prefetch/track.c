/* track.c: open file descriptions with hints and their advisors (pf_track.h). */
#include "pf_track.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pf_advisor.h"
#include "pf_config.h"
#include "pf_manager.h"
#include "pf_real.h"

/* Descriptors at or above this are never tracked. */
#define PF_FDS 65536

struct pf_tracker {
	int refs;			/* descriptors and callers; under tab_lock */
	struct pf_advisor *adv;		/* in-process advisor, or */
	uint64_t id;			/* the manager's advisor (id != 0) */
	atomic_int advised;		/* the application advised it itself */
};

static _Atomic(struct pf_tracker *) tab[PF_FDS];
static pthread_mutex_t tab_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pf_config *config;
static struct pf_counters counters;
static atomic_ulong hinted_opens, app_advice, bypass[3];
static int threaded = 1;
static const char *stats_path;
static struct pf_mclient *manager;
static atomic_int said[5];

enum { SAY_CONFIG, SAY_OPEN, SAY_MANAGER, SAY_SETTING, SAY_STORE };

/* One line on stderr, once per kind of trouble. */
static void say(int kind, const char *fmt, ...)
{
	char line[768];
	if (atomic_exchange(&said[kind], 1))
		return;
	int n = snprintf(line, sizeof(line), "loggp-prefetch: ");
	va_list ap;
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	ssize_t w = write(2, line, (size_t)n);
	(void)w;
}

static void write_stats(void)
{
	char buf[1024];
	FILE *f;
	if (!stats_path || !(f = fopen(stats_path, "a")))
		return;
	int n = snprintf(buf, sizeof(buf), "{\"pid\":%d,\"mode\":\"%s\",\"hinted_opens\":%lu,",
			 (int)getpid(), manager ? "manager" : threaded ? "thread" : "inline",
			 atomic_load(&hinted_opens));
	n += pf_counters_json(&counters, buf + n, sizeof(buf) - (size_t)n);
	snprintf(buf + n, sizeof(buf) - (size_t)n,
		 ",\"app_advice\":%lu,\"not_prefetched\":{\"mmap\":%lu,"
		 "\"copy_file_range\":%lu,\"sendfile\":%lu}}\n",
		 atomic_load(&app_advice), atomic_load(&bypass[PF_BYPASS_MMAP]),
		 atomic_load(&bypass[PF_BYPASS_COPY_FILE_RANGE]),
		 atomic_load(&bypass[PF_BYPASS_SENDFILE]));
	fputs(buf, f);
	fclose(f);
}

void pf_track_init(void)
{
	char err[512];
	const char *path = getenv("LOGGP_PREFETCH_CONFIG");
	const char *adv = getenv("LOGGP_PREFETCH_ADVISOR");
	const char *sock = getenv("LOGGP_PREFETCH_MANAGER");
	const char *inst = getenv("LOGGP_PREFETCH_PFS_INSTANCE");
	const char *mnt = getenv("LOGGP_PREFETCH_PFS_MOUNT");
	stats_path = getenv("LOGGP_PREFETCH_STATS");
	if (!path || !*path)
		return;
	if (adv && strcmp(adv, "inline") == 0)
		threaded = 0;
	else if (adv && *adv && strcmp(adv, "thread") != 0)
		say(SAY_SETTING, "LOGGP_PREFETCH_ADVISOR=%s: not one of thread, inline; using thread",
		    adv);
	struct pf_config *c;
	if (pf_config_load(path, &c, err, sizeof(err)) < 0) {
		say(SAY_CONFIG, "%s; prefetching is off", err);
		return;
	}
	if (sock && *sock && pf_mclient_connect(sock, &manager, err, sizeof(err)) < 0)
		say(SAY_MANAGER, "%s; advising in the process instead", err);
	if (inst && *inst && mnt && *mnt && pf_pfs_setup(inst, mnt, err, sizeof(err)) < 0)
		say(SAY_STORE, "%s; its files are prefetched through the page cache", err);
	config = c;
	if (stats_path)
		atexit(write_stats);
}

int pf_track_enabled(void)
{
	return config != NULL;
}

static void release(struct pf_tracker *t)
{
	if (t->adv)
		pf_advisor_close(t->adv);
	else
		pf_mclient_close(manager, t->id);
	free(t);
}

void pf_track_put(struct pf_tracker *t)
{
	pthread_mutex_lock(&tab_lock);
	int last = --t->refs == 0;
	pthread_mutex_unlock(&tab_lock);
	if (last)
		release(t);
}

struct pf_tracker *pf_track_get(int fd)
{
	if (fd < 0 || fd >= PF_FDS || !atomic_load_explicit(&tab[fd], memory_order_relaxed))
		return NULL;
	pthread_mutex_lock(&tab_lock);
	struct pf_tracker *t = atomic_load(&tab[fd]);
	if (t)
		t->refs++;
	pthread_mutex_unlock(&tab_lock);
	return t;
}

/* Puts t (one reference given) at fd; the tracker it replaces loses one. */
static void install(int fd, struct pf_tracker *t)
{
	pthread_mutex_lock(&tab_lock);
	struct pf_tracker *old = atomic_exchange(&tab[fd], t);
	int last = old && --old->refs == 0;
	pthread_mutex_unlock(&tab_lock);
	if (last)
		release(old);
}

void pf_track_open(int fd)
{
	char link[64], path[PATH_MAX], err[768];
	struct stat st;
	if (!config || fd < 0 || fd >= PF_FDS || atomic_load(&tab[fd]))
		return;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return;
	path[n] = '\0';
	const struct pf_entry *e = pf_config_match(config, path);
	if (!e)
		return;
	struct pf_tracker *t = calloc(1, sizeof(*t));
	if (!t)
		return;
	t->refs = 1;
	/* Read-only files beneath the store's mount: its own cache, advised
	 * inline (a fetch only sends requests). */
	if (pf_pfs_claims(path) && (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY &&
	    !(t->adv = pf_advisor_open(e, &pf_pfs_ops, fd, path, 0, &counters, err, sizeof(err))))
		say(SAY_STORE, "%s; prefetched through the page cache instead", err);
	else if (manager && pf_mclient_open(manager, e, fd, path, &t->id, err, sizeof(err)) < 0)
		say(SAY_MANAGER, "%s; advising in the process instead", err);
	if (!t->id && !t->adv)
		t->adv = pf_advisor_open(e, &pf_pagecache_ops, fd, path, threaded, &counters, err,
					 sizeof(err));
	if (!t->id && !t->adv) {
		atomic_fetch_add(&counters.errors, 1);
		say(SAY_OPEN, "%s; this file is read without prefetching", err);
		free(t);
		return;
	}
	atomic_fetch_add(&hinted_opens, 1);
	install(fd, t);
}

void pf_track_close(int fd)
{
	if (fd < 0 || fd >= PF_FDS || !atomic_load_explicit(&tab[fd], memory_order_relaxed))
		return;
	install(fd, NULL);
}

void pf_track_dup(int oldfd, int newfd)
{
	if (newfd < 0 || newfd >= PF_FDS || oldfd == newfd)
		return;
	struct pf_tracker *t = pf_track_get(oldfd);
	if (t)
		install(newfd, t);
	else
		pf_track_close(newfd);
}

void pf_track_read(struct pf_tracker *t, uint64_t off, uint64_t len)
{
	if (atomic_load_explicit(&t->advised, memory_order_relaxed))
		return;
	if (t->adv)
		pf_advisor_request(t->adv, off, len);
	else
		pf_mclient_request(manager, t->id, off, len);
}

int pf_track_serves(const struct pf_tracker *t)
{
	return t->adv && pf_advisor_serves(t->adv);
}

ssize_t pf_track_serve(struct pf_tracker *t, void *buf, uint64_t off, uint64_t len)
{
	if (atomic_load_explicit(&t->advised, memory_order_relaxed))
		return -1;
	return pf_advisor_serve(t->adv, buf, off, len);
}

void pf_track_app_advice(struct pf_tracker *t)
{
	atomic_fetch_add(&app_advice, 1);
	atomic_store(&t->advised, 1);
	if (t->adv)
		pf_advisor_detach(t->adv);
	else
		pf_mclient_detach(manager, t->id);
}

void pf_track_bypass(struct pf_tracker *t, enum pf_bypass how)
{
	atomic_fetch_add(&bypass[how], 1);
}

void pf_track_forked(void)
{
	pf_pfs_forked();
	for (int fd = 0; fd < PF_FDS; fd++)
		atomic_store_explicit(&tab[fd], NULL, memory_order_relaxed);
}

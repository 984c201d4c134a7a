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
#include <sys/sysmacros.h>
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
	dev_t dev;			/* the file's identity, checked at every */
	ino_t ino;			/* lookup (a number reused behind our back) */
	pthread_mutex_t pos_lock;	/* reads at the position, one at a time */
};

static _Atomic(struct pf_tracker *) tab[PF_FDS];
static pthread_mutex_t tab_lock = PTHREAD_MUTEX_INITIALIZER;
/* The process the trackers belong to: a vfork child (or one forked without
 * the fork handlers) runs the wrappers in, or on a copy of, its parent's
 * memory, and must neither free nor allocate there. */
static pid_t self_pid;
static atomic_int exiting;
static struct pf_config *config;
static struct pf_counters counters;
static atomic_ulong hinted_opens, app_advice, app_sequential, bypass[3];
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
		 ",\"app_advice\":%lu,\"app_sequential\":%lu,\"not_prefetched\":{\"mmap\":%lu,"
		 "\"copy_file_range\":%lu,\"sendfile\":%lu}}\n",
		 atomic_load(&app_advice), atomic_load(&app_sequential),
		 atomic_load(&bypass[PF_BYPASS_MMAP]),
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
	self_pid = getpid();
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

/* Not the process the trackers belong to (pf_track.h): do nothing. */
static int foreign(void)
{
	return getpid() != self_pid;
}

/* The manager's trouble: one line, the first time it is given up. */
static void manager_said(int rc, const char *err)
{
	if (rc < 0)
		say(SAY_MANAGER, "%s; its files are read without advice from now on", err);
}

static void release(struct pf_tracker *t)
{
	char err[512];
	if (t->adv)
		pf_advisor_close(t->adv);
	else
		manager_said(pf_mclient_close(manager, t->id, err, sizeof(err)), err);
	pthread_mutex_destroy(&t->pos_lock);
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

static struct pf_tracker *take(int fd)
{
	pthread_mutex_lock(&tab_lock);
	struct pf_tracker *t = atomic_load(&tab[fd]);
	if (t)
		t->refs++;
	pthread_mutex_unlock(&tab_lock);
	return t;
}

/* Puts t (one reference given) at fd in place of old (NULL: whatever is
 * there), which loses its reference. */
static void replace(int fd, struct pf_tracker *old, struct pf_tracker *t)
{
	pthread_mutex_lock(&tab_lock);
	struct pf_tracker *cur = atomic_load(&tab[fd]);
	int last = 0;
	if (!old || cur == old) {
		atomic_store(&tab[fd], t);
		last = cur && --cur->refs == 0;
	}
	pthread_mutex_unlock(&tab_lock);
	if (last)
		release(cur);
}

static void install(int fd, struct pf_tracker *t)
{
	replace(fd, NULL, t);
}

static int same_file(int fd, const struct pf_tracker *t)
{
	struct statx sx;
	struct stat st;
	/* Identity only: no attribute a network file system must fetch. */
	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_INO, &sx) == 0)
		return makedev(sx.stx_dev_major, sx.stx_dev_minor) == t->dev &&
		       sx.stx_ino == t->ino;
	if (errno == EBADF)
		return 0;
	/* no statx (an old kernel, a filter): fstat */
	return fstat(fd, &st) == 0 && st.st_dev == t->dev && st.st_ino == t->ino;
}

static void track(int fd);

struct pf_tracker *pf_track_get(int fd)
{
	if (fd < 0 || fd >= PF_FDS || !atomic_load_explicit(&tab[fd], memory_order_relaxed))
		return NULL;
	if (atomic_load(&exiting) || foreign())
		return NULL;
	struct pf_tracker *t = take(fd);
	if (t && !same_file(fd, t)) {
		/* Closed behind the library's back (syscall(SYS_close),
		 * closefrom, io_uring) and the number maybe given to another
		 * file: that one is looked at afresh. */
		replace(fd, t, NULL);
		pf_track_put(t);
		track(fd);
		t = take(fd);
	}
	return t;
}

static void track(int fd)
{
	char link[64], path[PATH_MAX], err[768];
	struct stat st;
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
	t->dev = st.st_dev;
	t->ino = st.st_ino;
	pthread_mutex_init(&t->pos_lock, NULL);
	/* Read-only files beneath the store's mount: its own cache, advised
	 * inline (a fetch only sends requests). */
	if (pf_pfs_claims(path) && (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY &&
	    !(t->adv = pf_advisor_open(e, &pf_pfs_ops, fd, path, 0, &counters, err, sizeof(err))))
		say(SAY_STORE, "%s; prefetched through the page cache instead", err);
	else if (!t->adv && manager &&
		 pf_mclient_open(manager, e, fd, path, &t->id, err, sizeof(err)) < 0)
		say(SAY_MANAGER, "%s; advising in the process instead", err);
	if (!t->id && !t->adv)
		t->adv = pf_advisor_open(e, &pf_pagecache_ops, fd, path, threaded, &counters, err,
					 sizeof(err));
	if (!t->id && !t->adv) {
		atomic_fetch_add(&counters.errors, 1);
		say(SAY_OPEN, "%s; this file is read without prefetching", err);
		pthread_mutex_destroy(&t->pos_lock);
		free(t);
		return;
	}
	atomic_fetch_add(&hinted_opens, 1);
	install(fd, t);
}

void pf_track_open(int fd, int fresh)
{
	if (!config || fd < 0 || fd >= PF_FDS || atomic_load(&exiting) || foreign())
		return;
	if (atomic_load(&tab[fd])) {
		if (!fresh)
			return;	/* fdopen of a tracked descriptor */
		/* A new open got this number: the file that had it was closed
		 * behind the library's back. */
		install(fd, NULL);
	}
	track(fd);
}

void pf_track_close(int fd)
{
	if (fd < 0 || fd >= PF_FDS || !atomic_load_explicit(&tab[fd], memory_order_relaxed))
		return;
	if (!foreign())
		install(fd, NULL);
}

void pf_track_close_range(unsigned first, unsigned last)
{
	if (!config || foreign())
		return;
	for (unsigned fd = first; fd <= last && fd < PF_FDS; fd++)
		pf_track_close((int)fd);
}

void pf_track_dup(int oldfd, int newfd)
{
	if (newfd < 0 || newfd >= PF_FDS || oldfd == newfd || !config || foreign())
		return;
	struct pf_tracker *t = pf_track_get(oldfd);
	if (t)
		install(newfd, t);
	else
		pf_track_close(newfd);
}

void pf_track_lock(struct pf_tracker *t)
{
	pthread_mutex_lock(&t->pos_lock);
}

void pf_track_unlock(struct pf_tracker *t)
{
	pthread_mutex_unlock(&t->pos_lock);
}

void pf_track_read(struct pf_tracker *t, uint64_t off, uint64_t len)
{
	char err[512];
	if (atomic_load_explicit(&t->advised, memory_order_relaxed))
		return;
	if (t->adv) {
		pf_advisor_request(t->adv, off, len);
		return;
	}
	int rc = pf_mclient_request(manager, t->id, off, len, err, sizeof(err));
	if (rc == 1)
		atomic_fetch_add(&counters.dropped, 1);
	manager_said(rc, err);
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

void pf_track_app_sequential(struct pf_tracker *t)
{
	char err[512];
	atomic_fetch_add(&app_sequential, 1);
	if (t->adv)
		pf_advisor_sequential(t->adv);
	else
		manager_said(pf_mclient_sequential(manager, t->id, err, sizeof(err)), err);
}

void pf_track_app_advice(struct pf_tracker *t)
{
	char err[512];
	atomic_fetch_add(&app_advice, 1);
	atomic_store(&t->advised, 1);
	if (t->adv)
		pf_advisor_detach(t->adv);
	else
		manager_said(pf_mclient_detach(manager, t->id, err, sizeof(err)), err);
}

void pf_track_bypass(struct pf_tracker *t, enum pf_bypass how)
{
	atomic_fetch_add(&bypass[how], 1);
}

void pf_track_forked(void)
{
	self_pid = getpid();
	pthread_mutex_init(&tab_lock, NULL);
	pf_pfs_forked();
	/* The parent's manager connection: replies to its opens and ours
	 * could cross.  The child advises in itself. */
	manager = NULL;
	for (int fd = 0; fd < PF_FDS; fd++)
		atomic_store_explicit(&tab[fd], NULL, memory_order_relaxed);
}

void pf_track_exit(void)
{
	if (!config || foreign())
		return;
	atomic_store(&exiting, 1);
	for (int fd = 0; fd < PF_FDS; fd++)
		if (atomic_load_explicit(&tab[fd], memory_order_relaxed))
			install(fd, NULL);
	pf_pfs_exit();
}

/*
 * interpose.c: libloggp-prefetch.so's wrappers of the C library (README.md,
 * "Interposer").  Each calls the next definition (dlsym RTLD_NEXT), then
 * tells the tracker what happened; a descriptor without hints costs one
 * atomic load.  Positions of read() and readv() come from the kernel, under
 * the tracker's position lock (threads sharing a description read one at a
 * time, as the kernel has them), so lseek needs no wrapper and descriptions
 * shared with other processes are seen as they are.
 */
#undef _FORTIFY_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/uio.h>
#include <unistd.h>

#include "pf_fortify.h"
#include "pf_real.h"
#include "pf_track.h"

#define PF_EXPORT __attribute__((visibility("default")))

/* The next definition of fn, looked up on first use (calls may come before
 * the constructor, from other libraries' constructors). */
#define NEXT(fn)                                                        \
	static __typeof__(fn) *next_##fn;                               \
	if (__builtin_expect(!next_##fn, 0))                            \
		next_##fn = (__typeof__(fn) *)dlsym(RTLD_NEXT, #fn)


__attribute__((constructor)) static void pf_load(void)
{
	pf_track_init();
	if (pf_track_enabled())
		pthread_atfork(NULL, NULL, pf_track_forked);
}

/* At exit, before the libraries it depends on (libfabric among them) are
 * finalized: every tracker ends, the store's connection closes. */
__attribute__((destructor)) static void pf_unload(void)
{
	pf_track_exit();
}

static int opened(int fd)
{
	if (fd >= 0 && pf_track_enabled())
		pf_track_open(fd, 1);
	return fd;
}

static FILE *fopened(FILE *fp, int fresh)
{
	if (fp && pf_track_enabled())
		pf_track_open(fileno(fp), fresh);
	return fp;
}

#define HERE ((off_t)-1)	/* a read at the description's position */
#define NOT_SERVED (-2)

/*
 * A read of fd's tracker (NULL: untracked) at off (HERE: at the position),
 * from start to finish: reads at the position hold the tracker's position
 * lock throughout, so that threads sharing the description each get their
 * own bytes, as from the kernel.
 */
static struct pf_tracker *begin(int fd, off_t off)
{
	struct pf_tracker *t = pf_track_get(fd);
	if (t && off == HERE)
		pf_track_lock(t);
	return t;
}

/*
 * A file whose back-end serves reads (the store's): advised, then copied
 * from its cache, moving the position as read() would.  NOT_SERVED when the
 * back-end does not serve or does not hold it all: the caller reads.
 */
static ssize_t serve(struct pf_tracker *t, int fd, void *buf, size_t n, off_t off)
{
	if (!pf_track_serves(t) || n == 0)
		return NOT_SERVED;
	off_t at = off != HERE ? off : lseek(fd, 0, SEEK_CUR);
	if (at < 0)
		return NOT_SERVED;
	pf_track_read(t, (uint64_t)at, n);
	ssize_t r = pf_track_serve(t, buf, (uint64_t)at, n);
	if (r >= 0 && off == HERE && lseek(fd, at + r, SEEK_SET) < 0)
		r = -1;
	return r >= 0 ? r : NOT_SERVED;
}

/* The read of n bytes (negative: it failed) is over.  Back-ends that serve
 * reads were advised by serve() already. */
static ssize_t end(struct pf_tracker *t, int fd, off_t off, ssize_t n)
{
	if (!t)
		return n;
	int e = errno;	/* the application's call's */
	if (n > 0 && !pf_track_serves(t)) {
		off_t at = off != HERE ? off : lseek(fd, 0, SEEK_CUR) - n;
		if (at >= 0)
			pf_track_read(t, (uint64_t)at, (uint64_t)n);
	}
	if (off == HERE)
		pf_track_unlock(t);
	pf_track_put(t);
	errno = e;
	return n;
}

/* A read the back-end may serve: served, or read by the call given. */
#define SERVED_OR(t, fd, buf, n, off, call)                                    \
	do {                                                                   \
		struct pf_tracker *t_ = (t);                                   \
		if (!t_)                                                       \
			return call;                                           \
		ssize_t r_ = serve(t_, fd, buf, n, off);                       \
		if (r_ != NOT_SERVED) {                                        \
			if ((off) == HERE)                                     \
				pf_track_unlock(t_);                           \
			pf_track_put(t_);                                      \
			return r_;                                             \
		}                                                              \
		return end(t_, fd, off, call);                                 \
	} while (0)

/* A stream's read: where it starts (the stream's position), then what it
 * returned. */
static struct pf_tracker *stream_begin(FILE *fp, off_t *pos)
{
	struct pf_tracker *t = pf_track_get(fileno(fp));
	*pos = t ? ftello(fp) : -1;
	return t;
}

static size_t stream_end(struct pf_tracker *t, off_t pos, size_t items, size_t size)
{
	if (!t)
		return items;
	if (items && pos >= 0)
		pf_track_read(t, (uint64_t)pos, (uint64_t)(items * size));
	pf_track_put(t);
	return items;
}

/*
 * A stream's read that the back-end may serve (the store's): only while the
 * stream holds no buffered bytes (its position is then the descriptor's;
 * stdio's own reads, past the wrappers, would go to the mount), whole items
 * from the cache, then the stream moved past them.  Advises the read first
 * (*advised).  1 when served.
 */
static int stream_serve(struct pf_tracker *t, FILE *fp, void *ptr, size_t size, size_t n,
			size_t room, int *advised)
{
	*advised = 0;
	if (!t || !pf_track_serves(t) || !size || !n || n > room / size)
		return 0;
	int served = 0;
	flockfile(fp);
	off_t at = ftello(fp);
	if (at >= 0 && fp->_IO_read_ptr == fp->_IO_read_end &&
	    fp->_IO_write_ptr == fp->_IO_write_base) {
		pf_track_read(t, (uint64_t)at, size * n);
		*advised = 1;
		served = pf_track_serve(t, ptr, (uint64_t)at, size * n) == (ssize_t)(size * n) &&
			 fseeko(fp, at + (off_t)(size * n), SEEK_SET) == 0;
	}
	funlockfile(fp);
	return served;
}

/* A stream's read: served, or read by the call given (and advised). */
#define STREAM_READ(fp, ptr, size, n, room, call)                              \
	do {                                                                   \
		off_t pos_;                                                    \
		int advised_;                                                  \
		struct pf_tracker *t_ = stream_begin(fp, &pos_);               \
		if (stream_serve(t_, fp, ptr, size, n, room, &advised_)) {     \
			pf_track_put(t_);                                      \
			return n;                                              \
		}                                                              \
		return stream_end(t_, advised_ ? -1 : pos_, call, size);      \
	} while (0)

static void bypassed(int fd, enum pf_bypass how)
{
	struct pf_tracker *t = pf_track_get(fd);
	if (t) {
		pf_track_bypass(t, how);
		pf_track_put(t);
	}
}

/* The mode argument exists only with O_CREAT or O_TMPFILE. */
#define MODE_ARG(flags, mode)                           \
	mode_t mode = 0;                                \
	if ((flags) & (O_CREAT | __O_TMPFILE)) {        \
		va_list ap;                             \
		va_start(ap, flags);                    \
		mode = (mode_t)va_arg(ap, unsigned);    \
		va_end(ap);                             \
	}

PF_EXPORT int open(const char *path, int flags, ...)
{
	NEXT(open);
	MODE_ARG(flags, mode);
	return opened(next_open(path, flags, mode));
}

PF_EXPORT int open64(const char *path, int flags, ...)
{
	NEXT(open64);
	MODE_ARG(flags, mode);
	return opened(next_open64(path, flags, mode));
}

PF_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	NEXT(openat);
	MODE_ARG(flags, mode);
	return opened(next_openat(dirfd, path, flags, mode));
}

PF_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	NEXT(openat64);
	MODE_ARG(flags, mode);
	return opened(next_openat64(dirfd, path, flags, mode));
}

PF_EXPORT int __open_2(const char *path, int flags)
{
	NEXT(__open_2);
	return opened(next___open_2(path, flags));
}

PF_EXPORT int __open64_2(const char *path, int flags)
{
	NEXT(__open64_2);
	return opened(next___open64_2(path, flags));
}

PF_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	NEXT(__openat_2);
	return opened(next___openat_2(dirfd, path, flags));
}

PF_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	NEXT(__openat64_2);
	return opened(next___openat64_2(dirfd, path, flags));
}

PF_EXPORT FILE *fopen(const char *path, const char *mode)
{
	NEXT(fopen);
	return fopened(next_fopen(path, mode), 1);
}

PF_EXPORT FILE *fopen64(const char *path, const char *mode)
{
	NEXT(fopen64);
	return fopened(next_fopen64(path, mode), 1);
}

PF_EXPORT FILE *fdopen(int fd, const char *mode)
{
	NEXT(fdopen);
	return fopened(next_fdopen(fd, mode), 0);
}

PF_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	NEXT(read);
	SERVED_OR(begin(fd, HERE), fd, buf, n, HERE, next_read(fd, buf, n));
}

PF_EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	NEXT(__read_chk);
	SERVED_OR(n <= buflen ? begin(fd, HERE) : NULL, fd, buf, n, HERE,
		  next___read_chk(fd, buf, n, buflen));
}

PF_EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	NEXT(pread);
	SERVED_OR(off >= 0 ? begin(fd, off) : NULL, fd, buf, n, off, next_pread(fd, buf, n, off));
}

PF_EXPORT ssize_t pread64(int fd, void *buf, size_t n, off64_t off)
{
	NEXT(pread64);
	SERVED_OR(off >= 0 ? begin(fd, off) : NULL, fd, buf, n, off,
		  next_pread64(fd, buf, n, off));
}

PF_EXPORT ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
	NEXT(__pread_chk);
	SERVED_OR(n <= buflen && off >= 0 ? begin(fd, off) : NULL, fd, buf, n, off,
		  next___pread_chk(fd, buf, n, off, buflen));
}

PF_EXPORT ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t off, size_t buflen)
{
	NEXT(__pread64_chk);
	SERVED_OR(n <= buflen && off >= 0 ? begin(fd, off) : NULL, fd, buf, n, off,
		  next___pread64_chk(fd, buf, n, off, buflen));
}

PF_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	NEXT(readv);
	struct pf_tracker *t = begin(fd, HERE);
	return end(t, fd, HERE, next_readv(fd, iov, cnt));
}

PF_EXPORT ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off)
{
	NEXT(preadv);
	struct pf_tracker *t = off >= 0 ? begin(fd, off) : NULL;
	return end(t, fd, off, next_preadv(fd, iov, cnt, off));
}

PF_EXPORT ssize_t preadv64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
	NEXT(preadv64);
	struct pf_tracker *t = off >= 0 ? begin(fd, off) : NULL;
	return end(t, fd, off, next_preadv64(fd, iov, cnt, off));
}

/* Offset -1: at the description's position, as readv. */
PF_EXPORT ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
	NEXT(preadv2);
	struct pf_tracker *t = off >= HERE ? begin(fd, off) : NULL;
	return end(t, fd, off, next_preadv2(fd, iov, cnt, off, flags));
}

PF_EXPORT ssize_t preadv64v2(int fd, const struct iovec *iov, int cnt, off64_t off, int flags)
{
	NEXT(preadv64v2);
	struct pf_tracker *t = off >= HERE ? begin(fd, off) : NULL;
	return end(t, fd, off, next_preadv64v2(fd, iov, cnt, off, flags));
}

PF_EXPORT size_t fread(void *ptr, size_t size, size_t n, FILE *fp)
{
	NEXT(fread);
	STREAM_READ(fp, ptr, size, n, SIZE_MAX, next_fread(ptr, size, n, fp));
}

PF_EXPORT size_t (fread_unlocked)(void *ptr, size_t size, size_t n, FILE *fp)
{
	NEXT(fread_unlocked);
	STREAM_READ(fp, ptr, size, n, SIZE_MAX, next_fread_unlocked(ptr, size, n, fp));
}

PF_EXPORT size_t __fread_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *fp)
{
	NEXT(__fread_chk);
	STREAM_READ(fp, ptr, size, n, ptrlen, next___fread_chk(ptr, ptrlen, size, n, fp));
}

PF_EXPORT size_t __fread_unlocked_chk(void *ptr, size_t ptrlen, size_t size, size_t n,
				      FILE *fp)
{
	NEXT(__fread_unlocked_chk);
	STREAM_READ(fp, ptr, size, n, ptrlen,
		    next___fread_unlocked_chk(ptr, ptrlen, size, n, fp));
}

PF_EXPORT int dup(int fd)
{
	NEXT(dup);
	int r = next_dup(fd);
	if (r >= 0)
		pf_track_dup(fd, r);
	return r;
}

PF_EXPORT int dup2(int fd, int fd2)
{
	NEXT(dup2);
	int r = next_dup2(fd, fd2);
	if (r >= 0)
		pf_track_dup(fd, r);
	return r;
}

PF_EXPORT int dup3(int fd, int fd2, int flags)
{
	NEXT(dup3);
	int r = next_dup3(fd, fd2, flags);
	if (r >= 0)
		pf_track_dup(fd, r);
	return r;
}

/* Every fcntl argument is an int, a long or a pointer: passed on as a word. */
static int fcntl_common(int (*next)(int, int, ...), int fd, int cmd, void *arg)
{
	int r = next(fd, cmd, arg);
	if (r >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC))
		pf_track_dup(fd, r);
	return r;
}

PF_EXPORT int fcntl(int fd, int cmd, ...)
{
	NEXT(fcntl);
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(next_fcntl, fd, cmd, arg);
}

PF_EXPORT int fcntl64(int fd, int cmd, ...)
{
	NEXT(fcntl64);
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(next_fcntl64, fd, cmd, arg);
}

PF_EXPORT int close(int fd)
{
	NEXT(close);
	pf_track_close(fd);
	return next_close(fd);
}

PF_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	NEXT(close_range);
	int r = next_close_range(first, last, flags);
	if (r == 0 && !(flags & CLOSE_RANGE_CLOEXEC))
		pf_track_close_range(first, last);
	return r;
}

PF_EXPORT int fclose(FILE *fp)
{
	NEXT(fclose);
	pf_track_close(fileno(fp));
	return next_fclose(fp);
}

/* The application's own advice (README.md, "The application's own advice"):
 * DONTNEED drops a cache and leaves the prefetcher on; SEQUENTIAL is a
 * reason to read ahead (coreutils' readers give it); any other advice
 * chooses a read pattern, and the prefetcher leaves the description alone. */
static int app_fadvise(int fd, int advice, int r)
{
	struct pf_tracker *t;
	if (r == 0 && advice != POSIX_FADV_DONTNEED && (t = pf_track_get(fd))) {
		if (advice == POSIX_FADV_SEQUENTIAL)
			pf_track_app_sequential(t);
		else
			pf_track_app_advice(t);
		pf_track_put(t);
	}
	return r;
}

PF_EXPORT int posix_fadvise(int fd, off_t off, off_t len, int advice)
{
	NEXT(posix_fadvise);
	return app_fadvise(fd, advice, next_posix_fadvise(fd, off, len, advice));
}

PF_EXPORT int posix_fadvise64(int fd, off64_t off, off64_t len, int advice)
{
	NEXT(posix_fadvise64);
	return app_fadvise(fd, advice, next_posix_fadvise64(fd, off, len, advice));
}

PF_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	NEXT(mmap);
	if (fd >= 0)
		bypassed(fd, PF_BYPASS_MMAP);
	return next_mmap(addr, len, prot, flags, fd, off);
}

PF_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
	NEXT(mmap64);
	if (fd >= 0)
		bypassed(fd, PF_BYPASS_MMAP);
	return next_mmap64(addr, len, prot, flags, fd, off);
}

PF_EXPORT ssize_t copy_file_range(int in, off64_t *inoff, int out, off64_t *outoff, size_t n,
				  unsigned flags)
{
	NEXT(copy_file_range);
	bypassed(in, PF_BYPASS_COPY_FILE_RANGE);
	return next_copy_file_range(in, inoff, out, outoff, n, flags);
}

PF_EXPORT ssize_t sendfile(int out, int in, off_t *off, size_t n)
{
	NEXT(sendfile);
	bypassed(in, PF_BYPASS_SENDFILE);
	return next_sendfile(out, in, off, n);
}

PF_EXPORT ssize_t sendfile64(int out, int in, off64_t *off, size_t n)
{
	NEXT(sendfile64);
	bypassed(in, PF_BYPASS_SENDFILE);
	return next_sendfile64(out, in, off, n);
}

/* pf_real.h inside the interposer: past every wrapper. */
int pf_real_dupfd(int fd)
{
	NEXT(fcntl);
	return next_fcntl(fd, F_DUPFD_CLOEXEC, 0);
}

int pf_real_close(int fd)
{
	NEXT(close);
	return next_close(fd);
}

int pf_real_fadvise(int fd, off_t off, off_t len, int advice)
{
	NEXT(posix_fadvise);
	return next_posix_fadvise(fd, off, len, advice);
}

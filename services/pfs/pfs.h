/*
 * pfs.h: the C API of the striped parallel file store (services/pfs).
 *
 * A pfs_t is one connection to an instance (the directory its servers
 * share, README.md): its own client id, libfabric endpoint and progress
 * thread.  Every call is thread-safe.  Paths are absolute within the store
 * ("/dir/file").
 *
 * Errors: calls return 0 or a byte count on success, a negative errno on
 * failure; pfs_errmsg() is then the calling thread's one-line message.
 * EIO means a server did not answer within the timeout or failed, and the
 * message names it ("pfs server 2 (DIR/server-2.addr) did not answer
 * within 2 s"); a call never waits longer than the timeout per request.
 * ENOSPC: a storage target is full.  Other values mean what they mean for
 * POSIX files.
 *
 * Durability: data is on the servers' disks once a pfs_fsync() that began
 * after the write completed has returned 0.  Metadata (create, mkdir,
 * rename, unlink) is on disk when the call returns.
 */
#ifndef LOGGP_PFS_H
#define LOGGP_PFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pfs_client pfs_t;
typedef struct pfs_file pfs_file_t;
typedef struct pfs_aio pfs_aio_t;

struct pfs_opts {
	const char *provider;	/* NULL: $LOGGP_PROVIDER, else "tcp;ofi_rxm" */
	unsigned timeout_ms;	/* per request; 0: 10000 */
	unsigned max_inflight;	/* requests in flight per server; 0: 8 */
};

struct pfs_attr {
	uint64_t ino;
	int is_dir;
	uint32_t mode;
	uint64_t size;		/* files: from the objects' sizes */
	uint64_t mtime_ns;	/* of the namespace entry's creation */
	uint64_t stripe_size;	/* directories: the default of new files */
	uint32_t stripe_count;	/* directories: 0 = every server */
	uint32_t stripe_start;
};

/* The thread's message of its last failed call ("" if none). */
const char *pfs_errmsg(void);

/* Connects to every server of the instance; opts may be NULL. */
int pfs_connect(const char *instance, const struct pfs_opts *opts, pfs_t **out);
/* Closes the connection; files must be closed and requests waited for.
 * A connection still open at exit has its progress thread stopped before
 * libfabric is torn down (its calls fail with ESHUTDOWN from then on); a
 * forked child has none of its parent's connections to use. */
void pfs_disconnect(pfs_t *p);
unsigned pfs_servers(const pfs_t *p);

int pfs_stat(pfs_t *p, const char *path, struct pfs_attr *st);
int pfs_mkdir(pfs_t *p, const char *path, unsigned mode);
int pfs_rmdir(pfs_t *p, const char *path);
int pfs_unlink(pfs_t *p, const char *path);
int pfs_rename(pfs_t *p, const char *from, const char *to);
int pfs_truncate(pfs_t *p, const char *path, uint64_t size);
/* Calls fn for each entry in name order; a non-zero return stops the walk
 * and is returned. */
int pfs_readdir(pfs_t *p, const char *path,
		int (*fn)(void *arg, const char *name, uint64_t ino, int is_dir), void *arg);
/*
 * A directory's default layout for files created in it from now on:
 * stripe_size a multiple of 4096 up to 64 MiB (0: keep), stripe_count 1..N
 * (0: keep, -1: every server).  EINVAL with a message for anything else.
 */
int pfs_setstripe(pfs_t *p, const char *path, uint64_t stripe_size, int stripe_count);

/*
 * Checks an explicit layout against the instance without changing
 * anything: stripe_size a multiple of 4096 from 4096 to 64 MiB,
 * stripe_count 1..N or -1 (every server).  0 or -EINVAL with a message
 * naming the bad value.  (pfs_setstripe and pfs_create take 0 as "keep" or
 * "inherit"; a command line that takes numbers from people checks them
 * here first.)
 */
int pfs_layout_check(const pfs_t *p, uint64_t stripe_size, int stripe_count);

/*
 * Opens a file.  flags: O_RDONLY, O_WRONLY or O_RDWR, with O_CREAT, O_EXCL,
 * O_TRUNC, O_APPEND.  pfs_create() gives a new file its own layout
 * (stripe_size 0 and stripe_count 0: the directory's; -1: every server).
 */
int pfs_open(pfs_t *p, const char *path, int flags, unsigned mode, pfs_file_t **out);
int pfs_create(pfs_t *p, const char *path, int flags, unsigned mode, uint64_t stripe_size,
	       int stripe_count, pfs_file_t **out);
/* Waits for nothing: asynchronous requests must be waited for first. */
int pfs_close(pfs_file_t *f);
/* At the file position (pfs_read/pfs_write, which they advance). */
ssize_t pfs_read(pfs_file_t *f, void *buf, size_t len);
ssize_t pfs_write(pfs_file_t *f, const void *buf, size_t len);
/* Short only at the end of the file; holes read as zeros. */
ssize_t pfs_pread(pfs_file_t *f, void *buf, size_t len, uint64_t off);
ssize_t pfs_pwrite(pfs_file_t *f, const void *buf, size_t len, uint64_t off);
int pfs_fstat(pfs_file_t *f, struct pfs_attr *st);
int pfs_ftruncate(pfs_file_t *f, uint64_t size);
int pfs_fsync(pfs_file_t *f);

/*
 * Asynchronous reads and writes: submitted at once (each stripe unit a
 * request to its server, at most max_inflight per server on the wire, the
 * rest queued in the client), completed by pfs_aio_wait(), which returns
 * the byte count or a negative errno and frees the handle.  buf must stay
 * valid until then.  Requests in flight together on overlapping ranges
 * have no order.
 */
int pfs_aio_pread(pfs_file_t *f, void *buf, size_t len, uint64_t off, pfs_aio_t **out);
int pfs_aio_pwrite(pfs_file_t *f, const void *buf, size_t len, uint64_t off,
		   pfs_aio_t **out);
/* 1 when done (pfs_aio_wait will not block), 0 while in flight. */
int pfs_aio_test(pfs_aio_t *a);
ssize_t pfs_aio_wait(pfs_aio_t *a);

/* Server's counters as a JSON object into buf; returns its length (it is
 * cut at len - 1 bytes). */
ssize_t pfs_server_stats(pfs_t *p, unsigned server, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif

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
 * rename, unlink, links, owners, modes, times, attributes) is on disk when
 * the call returns.
 *
 * Identity: what a thread creates is owned by the thread's uid and gid
 * (pfs_set_ids, by default the process's), and pfs_chmod, pfs_chown and
 * pfs_utimens are allowed or refused (EPERM) as POSIX says for them.  The
 * library checks no other permissions: a FUSE mount has the kernel check
 * the mode bits (default_permissions, mount.h).
 *
 * Symbolic links: met on the way through a path, they are followed (at
 * most 40, ELOOP); at its end, pfs_stat and pfs_open follow them,
 * pfs_lstat, pfs_readlink, pfs_unlink, pfs_rename and the rest do not.
 */
#ifndef LOGGP_PFS_H
#define LOGGP_PFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

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
	uint32_t mode;		/* permission, set-id and sticky bits (07777) */
	uint64_t size;		/* files: from the objects' sizes; links: the target's length */
	uint64_t mtime_ns;	/* data changed (files: the latest of the namespace's and objects') */
	uint64_t stripe_size;	/* directories: the default of new files */
	uint32_t stripe_count;	/* directories: 0 = every server */
	uint32_t stripe_start;
	uint32_t type;		/* S_IFREG, S_IFDIR, S_IFLNK, S_IFIFO, S_IFSOCK, S_IFCHR, S_IFBLK */
	uint32_t uid, gid;
	uint32_t nlink;
	uint64_t rdev;		/* devices */
	uint64_t atime_ns;	/* read (relatime, as the servers' disks are mounted) */
	uint64_t ctime_ns;	/* the entry or the data changed */
};

struct pfs_space {
	uint64_t bytes, free, avail;	/* summed over the servers' file systems */
	uint64_t files, ffree;		/* their inodes, summed */
};

/* The thread's message of its last failed call ("" if none). */
const char *pfs_errmsg(void);
/* The owner of what this thread creates from now on, and who asks in
 * pfs_chmod, pfs_chown and pfs_utimens. */
void pfs_set_ids(uint32_t uid, uint32_t gid);

/* Connects to every server of the instance; opts may be NULL. */
int pfs_connect(const char *instance, const struct pfs_opts *opts, pfs_t **out);
/* Closes the connection; files must be closed and requests waited for.
 * A connection still open at exit has its progress thread stopped before
 * libfabric is torn down (its calls fail with ESHUTDOWN from then on); a
 * forked child has none of its parent's connections to use. */
void pfs_disconnect(pfs_t *p);
unsigned pfs_servers(const pfs_t *p);

int pfs_stat(pfs_t *p, const char *path, struct pfs_attr *st);
int pfs_lstat(pfs_t *p, const char *path, struct pfs_attr *st);
int pfs_mkdir(pfs_t *p, const char *path, unsigned mode);
/* A FIFO, socket or device node: mode's S_IFMT bits say which (S_IFREG: a
 * file of the directory's layout). */
int pfs_mknod(pfs_t *p, const char *path, unsigned mode, uint64_t rdev);
int pfs_symlink(pfs_t *p, const char *target, const char *path);
/* The target's length; at most len bytes of it into buf, no NUL. */
ssize_t pfs_readlink(pfs_t *p, const char *path, char *buf, size_t len);
/* A second name for a file (not a directory): EPERM for directories. */
int pfs_link(pfs_t *p, const char *from, const char *to);
int pfs_chmod(pfs_t *p, const char *path, unsigned mode);
/* (uint32_t)-1 keeps that id; set-id bits of a non-directory are cleared. */
int pfs_chown(pfs_t *p, const char *path, uint32_t uid, uint32_t gid);
/* ts[0] atime, ts[1] mtime, each a time, UTIME_NOW or UTIME_OMIT; NULL: both now. */
int pfs_utimens(pfs_t *p, const char *path, const struct timespec ts[2]);
/* user.* attributes: flags 0, XATTR_CREATE or XATTR_REPLACE.  get and
 * list return the length and copy it when it fits in len (ERANGE when it
 * does not; len 0 asks the length only); list gives names ending in NUL. */
int pfs_setxattr(pfs_t *p, const char *path, const char *name, const void *value,
		 size_t size, int flags);
ssize_t pfs_getxattr(pfs_t *p, const char *path, const char *name, void *buf, size_t len);
ssize_t pfs_listxattr(pfs_t *p, const char *path, char *buf, size_t len);
int pfs_removexattr(pfs_t *p, const char *path, const char *name);
int pfs_statfs(pfs_t *p, struct pfs_space *out);
int pfs_rmdir(pfs_t *p, const char *path);
int pfs_unlink(pfs_t *p, const char *path);
int pfs_rename(pfs_t *p, const char *from, const char *to);
int pfs_truncate(pfs_t *p, const char *path, uint64_t size);
/* Calls fn for each entry in name order with its type (S_IFREG, S_IFDIR,
 * ...); a non-zero return stops the walk and is returned. */
int pfs_readdir(pfs_t *p, const char *path,
		int (*fn)(void *arg, const char *name, uint64_t ino, unsigned type), void *arg);
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
 * O_TRUNC, O_APPEND, O_NOFOLLOW.  pfs_create() gives a new file its own
 * layout (stripe_size 0 and stripe_count 0: the directory's; -1: every
 * server).  With O_APPEND every write goes to the end of the file, placed
 * by one server, so appenders on any clients lose nothing (each write of
 * one call is one record).
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
/* Owner, mode and the namespace's times as at open; size and data times now. */
int pfs_fstat(pfs_file_t *f, struct pfs_attr *st);
int pfs_ftruncate(pfs_file_t *f, uint64_t size);
int pfs_fsync(pfs_file_t *f);
/* posix_fallocate (mode 0): the range's blocks are allocated, the size
 * grows to off + len if that is more. */
int pfs_fallocate(pfs_file_t *f, uint64_t off, uint64_t len);

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

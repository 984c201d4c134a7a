/*
 * pf_track.h: the interposer's view of open files (README.md,
 * "Interposer").  Each hinted open file description has one tracker with an
 * advisor (in the process, or at the advice manager); the table maps every
 * descriptor that refers to it (dup, dup2, dup3, F_DUPFD) to it, and the
 * last close ends it.  Descriptors of files without hints map to nothing,
 * and asking about them costs one atomic load.
 *
 * Every call is thread-safe and never fails the application's call:
 * trouble is reported once per kind on stderr in one line and counted.
 *
 * Safe in any process: in a vfork child, or a child forked without the
 * fork handlers (raw clone), every call does nothing, so nothing of the
 * parent's is freed or allocated; after pf_track_exit() nothing is tracked.
 * A descriptor closed behind the library's back (syscall(SYS_close),
 * closefrom, io_uring) is noticed at the next lookup, where the file's
 * identity (device and inode) is compared, or when an open returns its
 * number again.
 */
#ifndef PF_TRACK_H
#define PF_TRACK_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct pf_tracker;

/* Reads LOGGP_PREFETCH_CONFIG and the other settings; once, at load. */
void pf_track_init(void);
/* 1 when a configuration is loaded (else the wrappers do nothing more). */
int pf_track_enabled(void);

/* fd was just opened (fresh: a new descriptor; 0: fdopen'ed): track it if
 * its file has hints. */
void pf_track_open(int fd, int fresh);
/* fd is about to be closed (or was replaced by dup2/dup3). */
void pf_track_close(int fd);
/* Descriptors first..last were closed (close_range). */
void pf_track_close_range(unsigned first, unsigned last);
/* newfd now refers to oldfd's open file description. */
void pf_track_dup(int oldfd, int newfd);

/* The tracker of fd with a reference, or NULL (one atomic load when fd is
 * not tracked; its identity checked when it is). */
struct pf_tracker *pf_track_get(int fd);
void pf_track_put(struct pf_tracker *t);
/* Serializes reads at the description's position (read, readv, preadv2
 * with -1), as the kernel does: the position asked, the bytes copied and
 * the position set are one step for other threads. */
void pf_track_lock(struct pf_tracker *t);
void pf_track_unlock(struct pf_tracker *t);

/* The application read len bytes at off. */
void pf_track_read(struct pf_tracker *t, uint64_t off, uint64_t len);
/* 1 when reads are served from the back-end's cache (the store's). */
int pf_track_serves(const struct pf_tracker *t);
/* Copies [off, off + len) from that cache: len, or -1 (read as usual). */
ssize_t pf_track_serve(struct pf_tracker *t, void *buf, uint64_t off, uint64_t len);
/* The application chose a read pattern with posix_fadvise: stop advising. */
void pf_track_app_advice(struct pf_tracker *t);
/* The application said SEQUENTIAL: read ahead adaptively (pf_adapt.h). */
void pf_track_app_sequential(struct pf_tracker *t);

enum pf_bypass { PF_BYPASS_MMAP, PF_BYPASS_COPY_FILE_RANGE, PF_BYPASS_SENDFILE };
/* A hinted file was read in a way the prefetcher does not see. */
void pf_track_bypass(struct pf_tracker *t, enum pf_bypass how);

/* The process forked: the child keeps no trackers (its advisors are gone). */
void pf_track_forked(void);
/* The process exits: every tracker ends (the store's in-flight reads
 * waited for, its connection closed) before libfabric is torn down. */
void pf_track_exit(void);

#endif

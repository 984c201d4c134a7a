/*
 * cio.h: the insides of the cached two-phase collective I/O library
 * (services/collio/README.md).  Every object here belongs to one open file
 * (struct cio_file) and is used by the thread that called MPI, except the
 * cache's sync queue, which its own lock guards (cio_cache.c).
 *
 * Errors: functions return 0 or a negative errno and print one line naming
 * what failed with cio_warn(); the MPI entry points turn them into MPI
 * error codes that every rank agrees on.
 */
#ifndef LOGGP_CIO_H
#define LOGGP_CIO_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

/* ---- hints (cio_hints.c, cio_json.c) ---- */

enum cio_cache_mode { CIO_CACHE_DISABLE, CIO_CACHE_ENABLE, CIO_CACHE_COHERENT };
enum cio_flush { CIO_FLUSH_IMMEDIATE, CIO_FLUSH_ONCLOSE, CIO_FLUSH_NONE };

struct cio_hints {
	int handled;		/* an e10_* key was given: collio serves the file */
	int cache;		/* enum cio_cache_mode */
	int flush;		/* enum cio_flush */
	int discard;		/* remove the cache file at close */
	int deferred_close;	/* close returns before the sync completes */
	int threads;		/* sync threads per file */
	int cb_nodes;		/* aggregators; 0: every rank */
	int striping_factor;	/* reported only: the store's layout is its own */
	int64_t striping_unit;	/* file domains are aligned to it; 0: not aligned */
	int64_t cb_buffer_size;	/* bytes an aggregator handles per round */
	int64_t ind_wr_buffer_size; /* bytes a sync thread moves per step */
	char cache_path[PATH_MAX];
};

/* The defaults: cache off, flush_immediate, discard, 1 thread, 16 MiB
 * rounds, 512 KiB sync steps, cache files in $TMPDIR (else /tmp). */
void cio_hints_default(struct cio_hints *h);
/* Sets one hint from text; keys collio does not know are ignored (0).
 * -EINVAL with a message naming the key, the value and what is accepted. */
int cio_hints_set(struct cio_hints *h, const char *key, const char *value);
/*
 * The hints of a file at open, lowest precedence first: the JSON file of
 * $LOGGP_COLLIO_HINTS (its Directory entries, then its File entry), the
 * ROMIO_HINTS-format file of $ROMIO_HINTS, then info (may be MPI_INFO_NULL).
 */
int cio_hints_resolve(struct cio_hints *h, const char *path, MPI_Info info);
/* Adds every hint in effect to info. */
int cio_hints_to_info(const struct cio_hints *h, int nprocs, MPI_Info info);
/* Calls set(arg, key, value) for each hint of path in the JSON file. */
int cio_json_hints(const char *file, const char *path,
		   int (*set)(void *arg, const char *key, const char *value), void *arg);

/* ---- flattening (cio_flat.c) ---- */

struct cio_seg {
	int64_t off;
	int64_t len;
};

/* A list of byte segments, adjacent ones merged as they are appended. */
struct cio_flat {
	struct cio_seg *seg;
	size_t n, cap;
	int64_t lb, extent;	/* of the datatype flattened */
	int64_t size;		/* sum of the lengths */
};

void cio_flat_init(struct cio_flat *f);
void cio_flat_free(struct cio_flat *f);
int cio_flat_append(struct cio_flat *f, int64_t off, int64_t len);
/* The type map of one element of a committed datatype as segments in type
 * map order (-ENOTSUP for a combiner collio does not know). */
int cio_flat_type(MPI_Datatype t, struct cio_flat *out);

/* ---- views (cio_view.c) ---- */

/* A file view: displacement, etype size and the flattened filetype. */
struct cio_view {
	int64_t disp;
	int64_t etype_size;
	struct cio_flat ft;
	int64_t *pref;		/* pref[i]: data bytes before segment i */
	int contiguous;		/* the filetype has no holes */
};

int cio_view_set(struct cio_view *v, int64_t disp, MPI_Datatype etype, MPI_Datatype filetype);
void cio_view_free(struct cio_view *v);
/* The file segments of len data bytes from data-stream byte pos, in file
 * order.  -EINVAL if the filetype's offsets decrease (MPI forbids it). */
int cio_view_access(const struct cio_view *v, int64_t pos, int64_t len, struct cio_flat *out);

/* ---- file domains (cio_domain.c) ---- */

struct cio_domains {
	int nagg;
	int *agg_rank;		/* rank of aggregator a */
	int64_t *start, *end;	/* domain a is [start[a], end[a]) */
	int64_t rounds;		/* rounds of cb_buffer_size every aggregator takes part in */
};

/* Divides [lo, hi) among nagg aggregators (spread over nprocs ranks), with
 * every boundary a multiple of su when su > 0, and counts the rounds of cb
 * bytes. */
int cio_domains_make(struct cio_domains *d, int64_t lo, int64_t hi, int nagg, int nprocs,
		     int64_t su, int64_t cb);
void cio_domains_free(struct cio_domains *d);

/* ---- the breakdown of one collective (seconds, this rank) ---- */

enum cio_phase {
	CIO_T_ALL2ALL, CIO_T_SHUFFLE, CIO_T_WAITALL, CIO_T_WRITE, CIO_T_POST_WRITE,
	CIO_T_SYNC, CIO_T_NOT_HIDDEN_SYNC, CIO_T_N
};

extern const char *const cio_phase_name[CIO_T_N];

/* ---- the cache (cio_cache.c) ---- */

struct cio_cache;

/* Opens the cache file (path by the naming rule) and starts the sync threads
 * that copy its extents to gfd. */
int cio_cache_open(struct cio_cache **out, const struct cio_hints *h, const char *gpath,
		   int gfd);
/* Writes to the cache; queues the extent for sync now (flush_immediate) or
 * keeps it until cio_cache_flush (flush_onclose). */
int cio_cache_write(struct cio_cache *c, const void *buf, int64_t len, int64_t off);
/* Queues every kept extent (unless flush_none) and waits until the queue is
 * empty; the first sync error since the last call, as a negative errno. */
int cio_cache_flush(struct cio_cache *c);
/* The first sync error not yet reported, without waiting. */
int cio_cache_error(struct cio_cache *c);
/* Seconds the sync threads spent copying since the last call. */
double cio_cache_sync_seconds(struct cio_cache *c);
/* Stops the threads (after cio_cache_flush), closes and maybe removes the
 * cache file. */
int cio_cache_close(struct cio_cache *c);
const char *cio_cache_path(const struct cio_cache *c);

/* ---- an open file (cio_file.c) ---- */

struct cio_file {
	MPI_File fh;		/* Open MPI's handle: the state calls not served here use */
	MPI_Comm comm;		/* a duplicate: collio's messages never match the user's */
	MPI_Group group;	/* comm's */
	int rank, nprocs;
	int gfd;		/* the global file */
	char path[PATH_MAX];
	struct cio_hints hints;
	struct cio_view view;
	struct cio_cache *cache; /* NULL with the cache off and on non-aggregators */
	int is_agg;
	int pending_err;	/* a sync error to report at the next collective */
	double t[CIO_T_N];	/* the last collective's breakdown */
	struct cio_file *next;
};

struct cio_file *cio_file_find(MPI_File fh);
int cio_file_open(MPI_Comm comm, const char *path, int amode, MPI_Info info, MPI_File fh,
		  int *mpi_err);
/* Completes the older deferred closes of f's ranks, then waits for the
 * cache (unless deferred), closes, unregisters.  Returns an MPI error code,
 * agreed by every rank. */
int cio_file_close(struct cio_file *f);
/*
 * Completes the deferred closes of the ranks of g (MPI_GROUP_NULL: all, as
 * MPI_Finalize does), oldest first, each agreed on its own communicator:
 * collective over g.  MPI_SUCCESS, or MPI_ERR_IO when any failed.
 */
int cio_file_drain(MPI_Group g);
/* The same for the ranks of comm (MPI_File_open's). */
int cio_file_drain_comm(MPI_Comm comm);
/* The sync errors of the deferred closes of g's ranks so far, without
 * waiting (each reported once, with a line): 0 or a negative errno, for a
 * collective of g's ranks to agree on. */
int cio_file_deferred_error(MPI_Group g);
/* Flushes the cache of f on every rank; MPI_SUCCESS or MPI_ERR_IO agreed by
 * every rank (deferred closes' errors so far included). */
int cio_file_flush(struct cio_file *f);
/* Adds the last call's breakdown to the totals loggp_collio_breakdown
 * returns and, with LOGGP_COLLIO_STATS, appends its line (collective). */
void cio_file_report(struct cio_file *f, const char *op, int64_t bytes);

/* ---- two-phase (cio_twophase.c) ---- */

/* Collective write/read of len bytes packed in buf at the file segments acc.
 * MPI_SUCCESS or MPI_ERR_IO, the same on every rank. */
int cio_twophase_write(struct cio_file *f, const struct cio_flat *acc, const char *buf);
int cio_twophase_read(struct cio_file *f, const struct cio_flat *acc, char *buf);

/* ---- messages ---- */

void cio_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* From now on cio_warn keeps its first message (the whole line) in buf
 * instead of printing it, until cio_warn_hold(NULL, 0). */
void cio_warn_hold(char *buf, size_t len);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * wl_mpiio.h: what the MPI-IO workloads (coll_perf, flashio, iorlike) share:
 * hints from -H, the compute phases between files, and the perceived write
 * bandwidth with the collio breakdown (services/collio) when that library
 * is loaded.
 *
 * Perceived bandwidth, as E10 defined it: all ranks' bytes over the sum, for
 * every file, of the time from the barrier before its MPI_File_open to the
 * end of its MPI_File_close on the slowest rank, plus the sync still not
 * done after the last file (collio's deferred closes completed with
 * loggp_collio_drain, the slowest rank's wait).  Compute between files is
 * not in it: that is where a cache hides the sync.
 */
#ifndef WL_MPIIO_H
#define WL_MPIIO_H

#include <mpi.h>

#include "wl.h"

#define WL_IO_PHASES 7

struct wl_io {
	double file_s;		/* sum over files of open + writes + close (slowest rank) */
	double write_s;		/* sum of the write calls alone (slowest rank per file) */
	double unhidden_s;	/* the wait after the last file */
	double bytes;		/* all ranks' bytes written */
	double phase_s[WL_IO_PHASES];	/* collio's breakdown: max over ranks of the sums */
	int collio;		/* the library is loaded */
	double t_open, t_write;	/* this rank's marks in the current file */
};

/* "k=v,k=v" as an MPI_Info (MPI_INFO_NULL for ""); -EINVAL with one line
 * from rank 0 for an item without '='. */
int wl_io_hints(const struct wl_prog *p, const char *hints, MPI_Info *info);
/* Spins for ms milliseconds (the program's compute phase). */
void wl_io_compute(int64_t ms);
/* Marks around one file: begin before MPI_File_open (after a barrier),
 * write_begin/write_end around its writes, end after MPI_File_close. */
void wl_io_begin(struct wl_io *io);
void wl_io_write_begin(struct wl_io *io);
void wl_io_write_end(struct wl_io *io);
void wl_io_end(struct wl_io *io, double bytes_this_rank);
/* After the last file: the unhidden sync and the breakdown (collective). */
void wl_io_finish(struct wl_io *io);
/* The metrics: perceived_MBps, write_MBps, unhidden_sync_s and, with
 * collio, one <phase>_s per phase; out needs 3 + WL_IO_PHASES entries;
 * returns how many it filled. */
int wl_io_metrics(const struct wl_io *io, struct wl_metric *out);

#endif

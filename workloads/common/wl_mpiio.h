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

/* The options every MPI-IO workload takes: -f PATH, -n FILES, -c MS, -H HINTS. */
struct wl_io_opts {
	const char *path;
	int64_t files;
	int64_t compute_ms;
	const char *hints;
};

#define WL_IO_USAGE \
	"  -f PATH      files PATH.0 .. PATH.FILES-1 (required)\n" \
	"  -n FILES     files written one after the other\n" \
	"  -c MS        compute phase, milliseconds (default 0)\n" \
	"  -H HINTS     MPI_Info hints of every open, KEY=VALUE[,KEY=VALUE...]\n" \
	"  -h           this help\n" \
	"Prints one JSON result line (docs/results.md): perceived_MBps, write_MBps,\n" \
	"unhidden_sync_s, and collio's breakdown when it is loaded.\n"

struct wl_io {
	double file_s;		/* sum over files of open + writes + close (slowest rank) */
	double write_s;		/* sum of the write calls alone (slowest rank per file) */
	double unhidden_s;	/* the wait after the last file */
	double bytes;		/* all ranks' bytes written */
	double phase_s[WL_IO_PHASES];	/* collio's breakdown: max over ranks of the sums */
	int collio;		/* the library is loaded */
	double t_open, t_write;	/* this rank's marks in the current file */
	char name[4096];	/* the current file */
	MPI_Info info;		/* from -H */
};

/* -f, -n, -c and -H into o: 0 or -EINVAL; 1 for another option. */
int wl_io_opt(const struct wl_prog *p, int c, const char *arg, struct wl_io_opts *o);
/* After the options: -f given, the hints parsed into io->info. */
int wl_io_setup(const struct wl_prog *p, const struct wl_io_opts *o, struct wl_io *io);
/* File f: the barrier, the mark, MPI_File_open (MPI_Abort with a line when
 * it fails), then the write mark. */
void wl_io_open(struct wl_io *io, const struct wl_prog *p, const struct wl_io_opts *o,
		int64_t f, int amode, MPI_File *fh);
/* The write mark, MPI_File_close, the file's times and bytes; MPI_Abort with
 * a line when ret (the writes' MPI error) or the close failed. */
void wl_io_close(struct wl_io *io, const struct wl_prog *p, MPI_File *fh, int ret,
		 double bytes_this_rank);
/* Whether the last file can be read back: not when the hints say flush_none. */
int wl_io_checkable(const struct wl_io_opts *o);
/* The result line (rank 0) with the metrics and params; frees io->info. */
void wl_io_report(struct wl_io *io, const struct wl_prog *p, int valid,
		  const struct wl_param *params, int nparams);

/* Spins for ms milliseconds (the program's compute phase). */
void wl_io_compute(int64_t ms);
/* After the last file: the unhidden sync and the breakdown (collective);
 * MPI_Abort with a line when a deferred close failed. */
void wl_io_finish(struct wl_io *io, const struct wl_prog *p);

#endif

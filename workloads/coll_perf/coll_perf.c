/* SPDX-License-Identifier: MIT */
/*
 * coll_perf: ROMIO's coll_perf pattern: a 3-D block-block-block distributed
 * array of ints (MPI_Type_create_darray over MPI_Dims_create), BSIZE³ per
 * rank, written with one MPI_File_write_all per file, a compute phase
 * between files.
 *
 *   mpirun -np N coll_perf -f PATH [-b BSIZE] [-n FILES] [-c MS] [-H k=v,...] [-h]
 *
 * Files are PATH.0, PATH.1, ...; every int is its global array index, so
 * the last file, read back with MPI_File_read_all, checks every value
 * (unless the hints say flush_none: then the global file is never written).
 * Metrics (workloads/common/wl_mpiio.h): perceived_MBps, write_MBps,
 * unhidden_sync_s and, beneath collio, its breakdown.  The program sends no
 * message itself (MPI-IO does): msgs are 0.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "wl.h"
#include "wl_mpiio.h"

struct cp_opts {
	const char *path;
	int64_t bsize;
	int64_t files;
	int64_t compute_ms;
	const char *hints;
};

static const char cp_usage[] =
	"usage: mpirun -np N coll_perf -f PATH [-b BSIZE] [-n FILES] [-c MS] [-H k=v,...] [-h]\n"
	"  -f PATH   files PATH.0 .. PATH.FILES-1 (required)\n"
	"  -b BSIZE  ints per side of each rank's cube (default 32: 128 KiB per rank)\n"
	"  -n FILES  files written one after the other (default 4)\n"
	"  -c MS     compute between files, milliseconds (default 0)\n"
	"  -H HINTS  MPI_Info hints of every open, KEY=VALUE[,KEY=VALUE...]\n"
	"  -h        this help\n"
	"Prints one JSON result line (docs/results.md): perceived_MBps, write_MBps,\n"
	"unhidden_sync_s, and collio's breakdown when it is loaded.\n";

static int cp_opt(const struct wl_prog *p, int c, const char *arg, void *ctx)
{
	struct cp_opts *o = ctx;

	switch (c) {
	case 'f':
		o->path = arg;
		return 0;
	case 'b':
		return wl_opt_int(p, c, arg, 1, 1024, &o->bsize);
	case 'n':
		return wl_opt_int(p, c, arg, 1, 100000, &o->files);
	case 'c':
		return wl_opt_int(p, c, arg, 0, 3600000, &o->compute_ms);
	case 'H':
		o->hints = arg;
		return 0;
	}
	return wl_opt_unknown(p, c);
}

int main(int argc, char **argv)
{
	struct wl_prog p = { .name = "coll_perf", .options = "-f, -b, -n, -c, -H" };
	struct cp_opts o = { .bsize = 32, .files = 4, .hints = "" };
	int gsizes[3], dims[3] = { 0, 0, 0 }, distribs[3], dargs[3], coords[3], ret, bad = 0;
	struct wl_metric metrics[3 + WL_IO_PHASES];
	struct wl_io io = { 0 };
	struct wl_msgs none = { 0 };
	struct wl_critical crit = { 0 };
	struct wl_result res;
	MPI_Datatype darray;
	MPI_Info info;
	int64_t n;
	int *buf;
	char name[4096];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p.nranks);
	ret = wl_opt_getopt(&p, argc, argv, ":f:b:n:c:H:h", NULL, cp_usage, cp_opt, &o);
	if (!ret && !o.path) {
		if (!p.rank)
			fprintf(stderr, "coll_perf: -f PATH is required (the files' name)\n");
		ret = -EINVAL;
	}
	if (!ret)
		ret = wl_io_hints(&p, o.hints, &info);
	if (ret) {
		MPI_Finalize();
		return ret > 0 ? 0 : WL_EXIT_USAGE;
	}
	MPI_Dims_create(p.nranks, 3, dims);
	for (int d = 0, r = p.rank; d < 3; d++) {
		gsizes[d] = dims[d] * (int)o.bsize;
		distribs[d] = MPI_DISTRIBUTE_BLOCK;
		dargs[d] = MPI_DISTRIBUTE_DFLT_DARG;
		/* the process grid is row-major */
		coords[2 - d] = r % dims[2 - d];
		r /= dims[2 - d];
	}
	MPI_Type_create_darray(p.nranks, p.rank, 3, gsizes, distribs, dargs, dims, MPI_ORDER_C,
			       MPI_INT, &darray);
	MPI_Type_commit(&darray);
	n = o.bsize * o.bsize * o.bsize;
	buf = malloc(n * sizeof(int));
	for (int64_t i = 0; i < o.bsize; i++)
		for (int64_t j = 0; j < o.bsize; j++)
			for (int64_t k = 0; k < o.bsize; k++)
				buf[(i * o.bsize + j) * o.bsize + k] =
					(int)(((coords[0] * o.bsize + i) * gsizes[1] +
					       coords[1] * o.bsize + j) * gsizes[2] +
					      coords[2] * o.bsize + k);
	for (int64_t f = 0; f < o.files; f++) {
		MPI_File fh;

		snprintf(name, sizeof(name), "%s.%lld", o.path, (long long)f);
		if (f)
			wl_io_compute(o.compute_ms);
		wl_io_begin(&io);
		if (MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, info,
				  &fh) != MPI_SUCCESS) {
			fprintf(stderr, "coll_perf: rank %d: cannot open %s\n", p.rank, name);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		MPI_File_set_view(fh, 0, MPI_INT, darray, "native", MPI_INFO_NULL);
		wl_io_write_begin(&io);
		ret = MPI_File_write_all(fh, buf, (int)n, MPI_INT, MPI_STATUS_IGNORE);
		wl_io_write_end(&io);
		ret |= MPI_File_close(&fh);
		wl_io_end(&io, (double)n * sizeof(int));
		if (ret != MPI_SUCCESS) {
			fprintf(stderr, "coll_perf: rank %d: writing %s failed\n", p.rank, name);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
	wl_io_finish(&io);
	if (!strstr(o.hints, "flush_none")) {
		MPI_File fh;
		int *back = calloc(n, sizeof(int));

		MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, info, &fh);
		MPI_File_set_view(fh, 0, MPI_INT, darray, "native", MPI_INFO_NULL);
		MPI_File_read_all(fh, back, (int)n, MPI_INT, MPI_STATUS_IGNORE);
		MPI_File_close(&fh);
		for (int64_t i = 0; i < n && !bad; i++)
			bad = back[i] != buf[i];
		if (bad)
			fprintf(stderr, "coll_perf: rank %d: %s read back wrong\n", p.rank, name);
		free(back);
	}
	if (wl_result_reduce(&p, !bad, io.file_s + io.unhidden_s, &none, &crit, &res))
		MPI_Abort(MPI_COMM_WORLD, 1);
	if (!p.rank) {
		struct wl_param params[] = {
			{ "bsize", o.bsize, NULL },
			{ "files", o.files, NULL },
			{ "compute_ms", o.compute_ms, NULL },
			{ "hints", 0, *o.hints ? o.hints : "none" },
		};

		wl_result_print(stdout, &p, &res, metrics, wl_io_metrics(&io, metrics), params, 4);
	}
	wl_result_fini(&res);
	if (info != MPI_INFO_NULL)
		MPI_Info_free(&info);
	MPI_Type_free(&darray);
	free(buf);
	MPI_Finalize();
	return 0;
}

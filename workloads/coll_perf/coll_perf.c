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
	struct wl_io_opts io;
	int64_t bsize;
};

static const char cp_usage[] =
	"usage: mpirun -np N coll_perf -f PATH [-b BSIZE] [-n FILES] [-c MS] [-H k=v,...] [-h]\n"
	"  -b BSIZE     ints per side of each rank's cube (default 32: 128 KiB per rank)\n"
	"  (-n: default 4 files; -c: compute between files)\n" WL_IO_USAGE;

static int cp_opt(const struct wl_prog *p, int c, const char *arg, void *ctx)
{
	struct cp_opts *o = ctx;
	int ret = wl_io_opt(p, c, arg, &o->io);

	if (ret <= 0)
		return ret;
	if (c == 'b')
		return wl_opt_int(p, c, arg, 1, 1024, &o->bsize);
	return wl_opt_unknown(p, c);
}

/* The darray of this rank and its block, every int its global index. */
static MPI_Datatype cp_view(const struct wl_prog *p, int64_t b, int *buf)
{
	int gsizes[3], dims[3] = { 0, 0, 0 }, distribs[3], dargs[3], coords[3];
	MPI_Datatype darray;

	MPI_Dims_create(p->nranks, 3, dims);
	for (int d = 0, r = p->rank; d < 3; d++) {
		gsizes[d] = dims[d] * (int)b;
		distribs[d] = MPI_DISTRIBUTE_BLOCK;
		dargs[d] = MPI_DISTRIBUTE_DFLT_DARG;
		/* the process grid is row-major */
		coords[2 - d] = r % dims[2 - d];
		r /= dims[2 - d];
	}
	MPI_Type_create_darray(p->nranks, p->rank, 3, gsizes, distribs, dargs, dims, MPI_ORDER_C,
			       MPI_INT, &darray);
	MPI_Type_commit(&darray);
	for (int64_t i = 0; i < b; i++)
		for (int64_t j = 0; j < b; j++)
			for (int64_t k = 0; k < b; k++)
				buf[(i * b + j) * b + k] =
					(int)(((coords[0] * b + i) * gsizes[1] + coords[1] * b + j) *
					      gsizes[2] + coords[2] * b + k);
	return darray;
}

int main(int argc, char **argv)
{
	struct wl_prog p = { .name = "coll_perf", .options = "-f, -b, -n, -c, -H" };
	struct cp_opts o = { .io = { .files = 4, .hints = "" }, .bsize = 32 };
	struct wl_io io = { 0 };
	MPI_Datatype darray;
	int64_t n;
	int *buf, ret, bad = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p.nranks);
	ret = wl_opt_getopt(&p, argc, argv, ":f:b:n:c:H:h", NULL, cp_usage, cp_opt, &o);
	if (!ret)
		ret = wl_io_setup(&p, &o.io, &io);
	if (ret) {
		MPI_Finalize();
		return ret > 0 ? 0 : WL_EXIT_USAGE;
	}
	n = o.bsize * o.bsize * o.bsize;
	buf = malloc(n * sizeof(int));
	darray = cp_view(&p, o.bsize, buf);
	for (int64_t f = 0; f < o.io.files; f++) {
		MPI_File fh;

		if (f)
			wl_io_compute(o.io.compute_ms);
		wl_io_open(&io, &p, &o.io, f, MPI_MODE_CREATE | MPI_MODE_WRONLY, &fh);
		MPI_File_set_view(fh, 0, MPI_INT, darray, "native", MPI_INFO_NULL);
		ret = MPI_File_write_all(fh, buf, (int)n, MPI_INT, MPI_STATUS_IGNORE);
		wl_io_close(&io, &p, &fh, ret, (double)n * sizeof(int));
	}
	wl_io_finish(&io, &p);
	if (wl_io_checkable(&o.io)) {
		MPI_File fh;
		int *back = calloc(n, sizeof(int));

		MPI_File_open(MPI_COMM_WORLD, io.name, MPI_MODE_RDONLY, io.info, &fh);
		MPI_File_set_view(fh, 0, MPI_INT, darray, "native", MPI_INFO_NULL);
		MPI_File_read_all(fh, back, (int)n, MPI_INT, MPI_STATUS_IGNORE);
		MPI_File_close(&fh);
		for (int64_t i = 0; i < n && !bad; i++)
			bad = back[i] != buf[i];
		if (bad)
			fprintf(stderr, "coll_perf: rank %d: %s read back wrong\n", p.rank, io.name);
		free(back);
	}
	{
		struct wl_param params[] = {
			{ "bsize", o.bsize, NULL },
			{ "files", o.io.files, NULL },
			{ "compute_ms", o.io.compute_ms, NULL },
			{ "hints", 0, *o.io.hints ? o.io.hints : "none" },
		};

		wl_io_report(&io, &p, !bad, params, 4);
	}
	MPI_Type_free(&darray);
	free(buf);
	MPI_Finalize();
	return 0;
}

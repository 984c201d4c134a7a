/* SPDX-License-Identifier: MIT */
/*
 * flashio: a Flash-IO-like checkpoint: every rank holds blocks of Z³ zones
 * (16³ by default, as FLASH's) of 24 double variables, base + rank mod 3
 * blocks per rank (FLASH's blocks per process vary), and each checkpoint
 * file stores every variable of every block, variable after variable, in
 * rank order: one MPI_File_write_at_all per variable (24 per file, as
 * FLASH's HDF5 writer issues them), a compute phase between files.
 *
 *   mpirun -np N flashio -f PATH [-B BLOCKS] [-z ZONES] [-n FILES] [-c MS]
 *                        [-H k=v,...] [-h]
 *
 * Every double is a function of (variable, global block, zone); the last
 * file is read back with MPI_File_read_at_all and checked (unless the hints
 * say flush_none).  Metrics as coll_perf's (workloads/common/wl_mpiio.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "wl.h"
#include "wl_mpiio.h"

#define FI_VARS 24

struct fi_opts {
	struct wl_io_opts io;
	int64_t blocks;
	int64_t zones;
};

static const char fi_usage[] =
	"usage: mpirun -np N flashio -f PATH [-B BLOCKS] [-z ZONES] [-n FILES] [-c MS]\n"
	"                            [-H k=v,...] [-h]\n"
	"  -B BLOCKS    blocks of rank r: BLOCKS + r mod 3 (default 8)\n"
	"  -z ZONES     zones per side of a block (default 16)\n"
	"  (-n: default 2 checkpoint files; -c: compute between files)\n" WL_IO_USAGE;

static int fi_opt(const struct wl_prog *p, int c, const char *arg, void *ctx)
{
	struct fi_opts *o = ctx;
	int ret = wl_io_opt(p, c, arg, &o->io);

	if (ret <= 0)
		return ret;
	if (c == 'B')
		return wl_opt_int(p, c, arg, 0, 4096, &o->blocks);
	if (c == 'z')
		return wl_opt_int(p, c, arg, 1, 64, &o->zones);
	return wl_opt_unknown(p, c);
}

static double fi_value(int v, int64_t block, int64_t zone)
{
	return v * 1e9 + block * 1e5 + zone;
}

/* Writes (or reads and checks) every variable; returns the MPI error or
 * the count of wrong values. */
static int fi_pass(MPI_File fh, double *buf, int64_t mine, int64_t first, int64_t total,
		   int64_t zb, int write)
{
	int ret = MPI_SUCCESS, bad = 0;

	for (int v = 0; v < FI_VARS && ret == MPI_SUCCESS; v++) {
		MPI_Offset off = ((MPI_Offset)v * total + first) * zb * (MPI_Offset)sizeof(double);

		for (int64_t b = 0; b < mine; b++)
			for (int64_t z = 0; z < zb; z++)
				buf[b * zb + z] = write ? fi_value(v, first + b, z) : -1;
		ret = write ? MPI_File_write_at_all(fh, off, buf, (int)(mine * zb), MPI_DOUBLE,
						    MPI_STATUS_IGNORE) :
			MPI_File_read_at_all(fh, off, buf, (int)(mine * zb), MPI_DOUBLE,
					     MPI_STATUS_IGNORE);
		for (int64_t b = 0; !write && b < mine; b++)
			for (int64_t z = 0; z < zb; z++)
				bad += buf[b * zb + z] != fi_value(v, first + b, z);
	}
	return ret != MPI_SUCCESS ? ret : bad;
}

int main(int argc, char **argv)
{
	struct wl_prog p = { .name = "flashio", .options = "-f, -B, -z, -n, -c, -H" };
	struct fi_opts o = { .io = { .files = 2, .hints = "" }, .blocks = 8, .zones = 16 };
	struct wl_io io = { 0 };
	int64_t mine, first = 0, total, zb;
	double *buf;
	int ret, bad = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p.nranks);
	ret = wl_opt_getopt(&p, argc, argv, ":f:B:z:n:c:H:h", NULL, fi_usage, fi_opt, &o);
	if (!ret)
		ret = wl_io_setup(&p, &o.io, &io);
	if (ret) {
		MPI_Finalize();
		return ret > 0 ? 0 : WL_EXIT_USAGE;
	}
	mine = o.blocks + p.rank % 3;
	MPI_Exscan(&mine, &first, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	if (!p.rank)
		first = 0;
	MPI_Allreduce(&mine, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	zb = o.zones * o.zones * o.zones;
	buf = malloc((mine * zb + 1) * sizeof(double));
	for (int64_t f = 0; f < o.io.files; f++) {
		MPI_File fh;

		if (f)
			wl_io_compute(o.io.compute_ms);
		wl_io_open(&io, &p, &o.io, f, MPI_MODE_CREATE | MPI_MODE_WRONLY, &fh);
		ret = fi_pass(fh, buf, mine, first, total, zb, 1);
		wl_io_close(&io, &p, &fh, ret, (double)FI_VARS * mine * zb * sizeof(double));
	}
	wl_io_finish(&io, &p);
	if (wl_io_checkable(&o.io)) {
		MPI_File fh;

		MPI_File_open(MPI_COMM_WORLD, io.name, MPI_MODE_RDONLY, io.info, &fh);
		bad = fi_pass(fh, buf, mine, first, total, zb, 0);
		MPI_File_close(&fh);
		if (bad)
			fprintf(stderr, "flashio: rank %d: %s read back wrong\n", p.rank, io.name);
	}
	{
		struct wl_param params[] = {
			{ "blocks", o.blocks, NULL },
			{ "zones", o.zones, NULL },
			{ "files", o.io.files, NULL },
			{ "compute_ms", o.io.compute_ms, NULL },
			{ "hints", 0, *o.io.hints ? o.io.hints : "none" },
		};

		wl_io_report(&io, &p, !bad, params, 5);
	}
	free(buf);
	MPI_Finalize();
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * iorlike: IOR's MPI-IO segmented writer: each file has SEGMENTS segments,
 * each segment one block of BLOCK bytes per rank in rank order, written in
 * transfers of XFER bytes with MPI_File_write_at_all (IOR's default), or
 * with -V through a file view and MPI_File_write_all (IOR's
 * --mpiio.useFileView); a compute phase after every segment and between
 * files.
 *
 *   mpirun -np N iorlike -f PATH [-t XFER] [-b BLOCK] [-s SEGMENTS] [-n FILES]
 *                        [-c MS] [-V] [-H k=v,...] [-h]
 *
 * Byte i of the file is a function of i; the last file is read back with
 * MPI_File_read_at_all and checked (unless the hints say flush_none).
 * Metrics as coll_perf's (workloads/common/wl_mpiio.h); the compute after
 * segments is inside a file's time, as it is in IOR's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "wl.h"
#include "wl_mpiio.h"

struct io_opts {
	struct wl_io_opts io;
	int64_t xfer;
	int64_t block;
	int64_t segments;
	int view;
};

static const char io_usage[] =
	"usage: mpirun -np N iorlike -f PATH [-t XFER] [-b BLOCK] [-s SEGMENTS] [-n FILES]\n"
	"                            [-c MS] [-V] [-H k=v,...] [-h]\n"
	"  -t XFER      bytes per collective call, suffix K or M (default 1M)\n"
	"  -b BLOCK     bytes per rank per segment, a multiple of XFER (default 4M)\n"
	"  -s SEGMENTS  segments per file (default 4)\n"
	"  -V           a file view and MPI_File_write_all (IOR's useFileView)\n"
	"  (-n: default 1 file; -c: compute after each segment and between files)\n"
	WL_IO_USAGE;

static int io_opt(const struct wl_prog *p, int c, const char *arg, void *ctx)
{
	struct io_opts *o = ctx;
	int ret = wl_io_opt(p, c, arg, &o->io);

	if (ret <= 0)
		return ret;
	switch (c) {
	case 't':
		return wl_opt_size(p, c, arg, 1, 1 << 30, &o->xfer);
	case 'b':
		return wl_opt_size(p, c, arg, 1, (int64_t)1 << 34, &o->block);
	case 's':
		return wl_opt_int(p, c, arg, 1, 1000000, &o->segments);
	case 'V':
		o->view = 1;
		return 0;
	}
	return wl_opt_unknown(p, c);
}

static unsigned char io_byte(MPI_Offset off)
{
	return (unsigned char)((off * 0x9e3779b97f4a7c15ULL) >> 56 ^ off);
}

/* Offset of transfer k of segment s of this rank. */
static MPI_Offset io_off(const struct io_opts *o, int rank, int nranks, int64_t s, int64_t k)
{
	return (s * nranks + rank) * o->block + k * o->xfer;
}

static int io_write(MPI_File fh, const struct io_opts *o, int rank, int nranks,
		    unsigned char *buf)
{
	int64_t per = o->block / o->xfer;
	int ret = MPI_SUCCESS;

	for (int64_t s = 0; s < o->segments && ret == MPI_SUCCESS; s++) {
		for (int64_t k = 0; k < per && ret == MPI_SUCCESS; k++) {
			MPI_Offset off = io_off(o, rank, nranks, s, k);

			for (int64_t i = 0; i < o->xfer; i++)
				buf[i] = io_byte(off + i);
			ret = o->view ? MPI_File_write_all(fh, buf, (int)o->xfer, MPI_BYTE,
							   MPI_STATUS_IGNORE) :
				MPI_File_write_at_all(fh, off, buf, (int)o->xfer, MPI_BYTE,
						      MPI_STATUS_IGNORE);
		}
		wl_io_compute(o->io.compute_ms);
	}
	return ret;
}

/* Reads the last file back: the number of wrong bytes. */
static int64_t io_check(const struct io_opts *o, const struct wl_io *io, int rank, int nranks,
			unsigned char *buf)
{
	int64_t bad = 0;
	MPI_File fh;

	MPI_File_open(MPI_COMM_WORLD, io->name, MPI_MODE_RDONLY, io->info, &fh);
	for (int64_t s = 0; s < o->segments; s++) {
		for (int64_t k = 0; k < o->block / o->xfer; k++) {
			MPI_Offset off = io_off(o, rank, nranks, s, k);

			MPI_File_read_at_all(fh, off, buf, (int)o->xfer, MPI_BYTE, MPI_STATUS_IGNORE);
			for (int64_t i = 0; i < o->xfer; i++)
				bad += buf[i] != io_byte(off + i);
		}
	}
	MPI_File_close(&fh);
	return bad;
}

int main(int argc, char **argv)
{
	struct wl_prog p = { .name = "iorlike", .options = "-f, -t, -b, -s, -n, -c, -V, -H" };
	struct io_opts o = { .io = { .files = 1, .hints = "" }, .xfer = 1 << 20,
			     .block = 4 << 20, .segments = 4 };
	struct wl_io io = { 0 };
	MPI_Datatype vec = MPI_DATATYPE_NULL;
	unsigned char *buf;
	int64_t bad = 0;
	int ret;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p.nranks);
	ret = wl_opt_getopt(&p, argc, argv, ":f:t:b:s:n:c:VH:h", NULL, io_usage, io_opt, &o);
	if (!ret && (o.block % o.xfer || o.xfer > INT32_MAX)) {
		if (!p.rank)
			fprintf(stderr, "iorlike: -b %lld is not a multiple of -t %lld\n",
				(long long)o.block, (long long)o.xfer);
		ret = -EINVAL;
	}
	if (!ret)
		ret = wl_io_setup(&p, &o.io, &io);
	if (ret) {
		MPI_Finalize();
		return ret > 0 ? 0 : WL_EXIT_USAGE;
	}
	if (o.view) {
		MPI_Datatype blk;

		MPI_Type_contiguous((int)o.block, MPI_BYTE, &blk);
		MPI_Type_create_resized(blk, 0, o.block * p.nranks, &vec);
		MPI_Type_free(&blk);
		MPI_Type_commit(&vec);
	}
	buf = malloc(o.xfer);
	for (int64_t f = 0; f < o.io.files; f++) {
		MPI_File fh;

		if (f)
			wl_io_compute(o.io.compute_ms);
		wl_io_open(&io, &p, &o.io, f, MPI_MODE_CREATE | MPI_MODE_WRONLY, &fh);
		if (o.view)
			MPI_File_set_view(fh, o.block * p.rank, MPI_BYTE, vec, "native",
					  MPI_INFO_NULL);
		ret = io_write(fh, &o, p.rank, p.nranks, buf);
		wl_io_close(&io, &p, &fh, ret, (double)o.block * o.segments);
	}
	wl_io_finish(&io, &p);
	if (wl_io_checkable(&o.io))
		bad = io_check(&o, &io, p.rank, p.nranks, buf);
	if (bad)
		fprintf(stderr, "iorlike: rank %d: %s read back wrong\n", p.rank, io.name);
	{
		struct wl_param params[] = {
			{ "xfer", o.xfer, NULL },
			{ "block", o.block, NULL },
			{ "segments", o.segments, NULL },
			{ "files", o.io.files, NULL },
			{ "compute_ms", o.io.compute_ms, NULL },
			{ "view", o.view, NULL },
			{ "hints", 0, *o.io.hints ? o.io.hints : "none" },
		};

		wl_io_report(&io, &p, !bad, params, 7);
	}
	if (vec != MPI_DATATYPE_NULL)
		MPI_Type_free(&vec);
	free(buf);
	MPI_Finalize();
	return 0;
}

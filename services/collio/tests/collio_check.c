/*
 * collio_check: writes a file collectively through one of the test views
 * (cio_views.h) and checks it, for tests/test_collio.py.
 *
 *   mpirun -np N collio_check -v VIEW|all -f FILE [-n UNITS] [-m all|at]
 *                             [-H k=v,k=v] [-s MS] [-r] [-R] [-e] [-I]
 *
 * Each rank writes UNITS elements of 3 bytes (a pattern of its rank) in two
 * collective calls: write_all twice at the file pointer (-m all) or
 * write_at_all at offsets 0 and half (-m at).  -e: rank 0 then compares the
 * whole file with the image MPI itself computes (MPI_Unpack of every rank's
 * data through its filetype: not collio's flattening).  -r: every rank reads
 * its data back with read_all/read_at_all and compares; -R: the same through
 * the handle it wrote with, before the close.  -I: rank 0 prints
 * MPI_File_get_info's keys as "info k=v ...".  -s MS: before the close,
 * each rank sleeps MS ms and prints "idle_cpu RANK FRACTION", the CPU its
 * threads used meanwhile.  -v all: every view, into FILE.VIEW.  No -H:
 * the files are opened with MPI_INFO_NULL.  Exit 0 when everything
 * matched, 1 with a one-line message naming the first difference, 2 on bad
 * usage.
 *
 * The file is first filled with a background byte as long as the image:
 * holes in the views must keep it (ROMIO's read-modify-write would write
 * garbage into the holes of a file that does not have them yet).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

#include <mpi.h>

#include "cio_hints_arg.h"
#include "cio_views.h"

enum { ESIZE = 3, BACKGROUND = 0xee };

static unsigned char pattern(int rank, long i)
{
	return (unsigned char)(rank * 131 + i * 7 + (i >> 8) + 1);
}

static MPI_Info make_info(char *hints)
{
	MPI_Info info;

	MPI_Info_create(&info);
	cio_hints_arg(hints, info);
	return info;
}

__attribute__((format(printf, 1, 2))) static int fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "collio_check: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	return 1;
}

/* The two collective calls of half the data each (at the pointer or at
 * explicit offsets), writing or reading. */
static int two_calls(MPI_File fh, unsigned char *buf, long len, int at, int write)
{
	long half = len / 2;
	MPI_Offset offs[2] = { 0, half };
	long lens[2] = { half, len - half };
	int rc = MPI_SUCCESS;

	for (int k = 0; k < 2 && rc == MPI_SUCCESS; k++) {
		MPI_Status st;
		unsigned char *p = buf + offs[k];
		int count;

		if (write)
			rc = at ? MPI_File_write_at_all(fh, offs[k], p, lens[k], MPI_BYTE, &st) :
				MPI_File_write_all(fh, p, lens[k], MPI_BYTE, &st);
		else
			rc = at ? MPI_File_read_at_all(fh, offs[k], p, lens[k], MPI_BYTE, &st) :
				MPI_File_read_all(fh, p, lens[k], MPI_BYTE, &st);
		if (rc == MPI_SUCCESS) {
			MPI_Get_count(&st, MPI_BYTE, &count);
			if (count != lens[k])
				return fail("status counts %d bytes, not %ld (call %d)", count,
					    lens[k], k);
		}
	}
	if (rc != MPI_SUCCESS) {
		char msg[MPI_MAX_ERROR_STRING];
		int n;

		MPI_Error_string(rc, msg, &n);
		return fail("collective %s failed: %s", write ? "write" : "read", msg);
	}
	return 0;
}

/* The file's expected image: every rank's data unpacked through its view. */
static unsigned char *expected_image(const char *view, int nprocs, long len, long *size)
{
	unsigned char *img = NULL, *mask = NULL;

	*size = 0;
	for (int r = 0; r < nprocs; r++) {
		MPI_Datatype ft;
		MPI_Offset disp;
		MPI_Aint lb, ext, tlb, text;
		int tsz, pos = 0, pos2 = 0;
		long tiles, need;
		unsigned char *data, *ones, *ti, *tm;

		cio_view_make(view, r, nprocs, &ft, &disp);
		MPI_Type_size(ft, &tsz);
		MPI_Type_get_extent(ft, &lb, &ext);
		MPI_Type_get_true_extent(ft, &tlb, &text);
		tiles = (len + tsz - 1) / tsz;
		need = disp + (tiles - 1) * ext + tlb + text;
		data = calloc(tiles * tsz, 1);
		ones = calloc(tiles * tsz, 1);
		ti = calloc(need, 1);
		tm = calloc(need, 1);
		for (long i = 0; i < len; i++) {
			data[i] = pattern(r, i);
			ones[i] = 1;
		}
		MPI_Unpack(data, tiles * tsz, &pos, ti + disp, tiles, ft, MPI_COMM_SELF);
		MPI_Unpack(ones, tiles * tsz, &pos2, tm + disp, tiles, ft, MPI_COMM_SELF);
		if (need > *size) {
			img = realloc(img, need);
			mask = realloc(mask, need);
			memset(img + *size, 0, need - *size);
			memset(mask + *size, 0, need - *size);
			*size = need;
		}
		for (long i = 0; i < need; i++) {
			if (tm[i]) {
				img[i] = ti[i];
				mask[i] = 1;
			}
		}
		free(data);
		free(ones);
		free(ti);
		free(tm);
		MPI_Type_free(&ft);
	}
	while (*size > 0 && !mask[*size - 1])
		(*size)--;
	for (long i = 0; i < *size; i++)
		if (!mask[i])
			img[i] = BACKGROUND;
	free(mask);
	return img;
}

static void fill_background(const char *file, const char *view, int nprocs, long len)
{
	long size;
	unsigned char *img = expected_image(view, nprocs, len, &size);
	FILE *fp = fopen(file, "wb");

	memset(img, BACKGROUND, size);
	fwrite(img, 1, size, fp);
	fclose(fp);
	free(img);
}

static int check_image(const char *file, const char *view, int nprocs, long len)
{
	long size, got;
	unsigned char *img = expected_image(view, nprocs, len, &size), *buf = malloc(size + 1);
	FILE *fp = fopen(file, "rb");
	int rc = 0;

	if (!fp)
		return fail("cannot open %s", file);
	got = fread(buf, 1, size + 1, fp);
	fclose(fp);
	if (got != size)
		rc = fail("file has %ld bytes, the image %ld", got, size);
	for (long i = 0; !rc && i < size; i++)
		if (buf[i] != img[i])
			rc = fail("byte %ld is %d, the image has %d", i, buf[i], img[i]);
	free(img);
	free(buf);
	return rc;
}

static void print_info(MPI_File fh)
{
	MPI_Info info;
	char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
	int n, flag;

	MPI_File_get_info(fh, &info);
	MPI_Info_get_nkeys(info, &n);
	printf("info");
	for (int i = 0; i < n; i++) {
		MPI_Info_get_nthkey(info, i, key);
		MPI_Info_get(info, key, MPI_MAX_INFO_VAL, val, &flag);
		printf(" %s=%s", key, val);
	}
	printf("\n");
	MPI_Info_free(&info);
}

struct opts {
	const char *file;
	long units;
	int at, readback, reread, image, showinfo, idle_ms;
	MPI_Info info;
};

/* CPU this process used (all its threads) over ms of sleep, as a fraction. */
static double idle_cpu(int ms)
{
	struct rusage a, b;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	getrusage(RUSAGE_SELF, &a);
	nanosleep(&ts, NULL);
	getrusage(RUSAGE_SELF, &b);
	return ((b.ru_utime.tv_sec - a.ru_utime.tv_sec) + (b.ru_stime.tv_sec - a.ru_stime.tv_sec) +
		(b.ru_utime.tv_usec - a.ru_utime.tv_usec) * 1e-6 +
		(b.ru_stime.tv_usec - a.ru_stime.tv_usec) * 1e-6) / (ms * 1e-3);
}

/* One view: write, check, read back.  0 or 1, agreed by every rank. */
static int check_view(const struct opts *o, const char *view, const char *file, int rank,
		      int nprocs)
{
	long len = o->units * ESIZE;
	unsigned char *buf = malloc(len), *back = calloc(len, 1);
	MPI_Datatype ft;
	MPI_Offset disp;
	MPI_File fh;
	int rc, crc;

	cio_view_make(view, rank, nprocs, &ft, &disp);
	for (long i = 0; i < len; i++)
		buf[i] = pattern(rank, i);
	if (!rank)
		fill_background(file, view, nprocs, len);
	MPI_Barrier(MPI_COMM_WORLD);
	rc = MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_CREATE | MPI_MODE_RDWR, o->info, &fh);
	if (rc != MPI_SUCCESS) {
		fprintf(stderr, "collio_check: open failed (MPI error %d)\n", rc);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_File_set_view(fh, disp, MPI_BYTE, ft, "native", MPI_INFO_NULL);
	rc = two_calls(fh, buf, len, o->at, 1);
	if (!rc && o->showinfo && !rank)
		print_info(fh);
	if (!rc && o->reread) {
		MPI_File_seek(fh, 0, MPI_SEEK_SET);
		rc = two_calls(fh, back, len, o->at, 0);
		for (long i = 0; !rc && i < len; i++)
			if (back[i] != buf[i])
				rc = fail("rank %d reread byte %ld as %d, wrote %d", rank, i, back[i],
					  buf[i]);
	}
	if (!rc && o->idle_ms)
		printf("idle_cpu %d %.4f\n", rank, idle_cpu(o->idle_ms));
	crc = MPI_File_close(&fh);
	if (crc != MPI_SUCCESS) {
		char msg[MPI_MAX_ERROR_STRING];
		int n;

		MPI_Error_string(crc, msg, &n);
		rc = fail("close failed: %s", msg);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (!rc && o->image && !rank)
		rc = check_image(file, view, nprocs, len);
	/* the read back is collective: every rank skips it when any failed */
	MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (!rc && o->readback) {
		MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_RDONLY, o->info, &fh);
		MPI_File_set_view(fh, disp, MPI_BYTE, ft, "native", MPI_INFO_NULL);
		rc = two_calls(fh, back, len, o->at, 0);
		MPI_File_close(&fh);
		for (long i = 0; !rc && i < len; i++)
			if (back[i] != buf[i])
				rc = fail("rank %d read byte %ld as %d, wrote %d", rank, i, back[i],
					  buf[i]);
	}
	MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (rc && !rank)
		fprintf(stderr, "collio_check: view %s failed\n", view);
	MPI_Type_free(&ft);
	free(buf);
	free(back);
	return rc;
}

int main(int argc, char **argv)
{
	struct opts o = { .units = 41 };
	const char *view = NULL;
	char hints[1024] = "", path[4096];
	int rank, nprocs, opt, rc = 0, bad;
	MPI_Datatype ft;
	MPI_Offset disp;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	while ((opt = getopt(argc, argv, "v:f:n:m:H:s:rReI")) != -1) {
		switch (opt) {
		case 'v': view = optarg; break;
		case 'f': o.file = optarg; break;
		case 'n': o.units = atol(optarg); break;
		case 'm': o.at = !strcmp(optarg, "at"); break;
		case 'H': snprintf(hints, sizeof(hints), "%s", optarg); break;
		case 's': o.idle_ms = atoi(optarg); break;
		case 'r': o.readback = 1; break;
		case 'R': o.reread = 1; break;
		case 'e': o.image = 1; break;
		case 'I': o.showinfo = 1; break;
		default: view = NULL;
		}
	}
	bad = !view || !o.file || o.units < 1;
	if (!bad && strcmp(view, "all")) {
		bad = cio_view_make(view, rank, nprocs, &ft, &disp);
		if (!bad)
			MPI_Type_free(&ft);
	}
	if (bad) {
		if (!rank)
			fprintf(stderr, "usage: mpirun -np N collio_check -v VIEW|all -f FILE "
					"[-n UNITS] [-m all|at] [-H k=v,...] [-s MS] [-r] [-R] [-e] [-I]\n");
		MPI_Finalize();
		return 2;
	}
	/* no -H: MPI_INFO_NULL, as programs that leave hints to files pass */
	o.info = *hints ? make_info(hints) : MPI_INFO_NULL;
	if (strcmp(view, "all")) {
		rc = check_view(&o, view, o.file, rank, nprocs);
	} else {
		for (int v = 0; cio_view_names[v]; v++) {
			snprintf(path, sizeof(path), "%s.%s", o.file, cio_view_names[v]);
			rc |= check_view(&o, cio_view_names[v], path, rank, nprocs);
		}
	}
	if (o.info != MPI_INFO_NULL)
		MPI_Info_free(&o.info);
	MPI_Finalize();
	return rc;
}

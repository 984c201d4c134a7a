/*
 * collio_status: the MPI_Status every collective data call collio serves
 * leaves, as MPI_Get_count and MPI_Get_elements_x read it, for
 * tests/test_collio.py, which runs it with and without collio and compares.
 *
 *   mpirun -np N collio_status -f FILE [-H k=v,k=v]
 *
 * Each rank writes one block at offset rank * BLOCK, then reads it back,
 * with write_all, write_at_all, read_all and read_at_all, in each buffer
 * datatype of types[] (named, contiguous, a struct of two basic types, a
 * vector with holes, a count of 0).  Every rank prints one line per call
 * and datatype: "rank R CALL TYPE count=C elements=E bytes=B".  Exit 0, or
 * 1 with a one-line message when a call failed or read back other data.
 * -H: the open's MPI_Info (collio serves the file when an e10_* key is in
 * it).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "cio_hints_arg.h"

enum { BLOCK = 16384 };

struct pair {
	int i;
	double d;
};

struct buftype {
	const char *name;
	MPI_Datatype type;
	int count;
};

static void make_types(struct buftype *t)
{
	MPI_Datatype pair, raw, types[2] = { MPI_INT, MPI_DOUBLE };
	int lens[2] = { 1, 1 };
	MPI_Aint displs[2] = { offsetof(struct pair, i), offsetof(struct pair, d) };

	t[0] = (struct buftype){ "byte", MPI_BYTE, 1000 };
	t[1] = (struct buftype){ "int", MPI_INT, 250 };
	/* the shape HDF5 uses for a contiguous buffer */
	MPI_Type_contiguous(4096, MPI_BYTE, &t[2].type);
	t[2].name = "contiguous4096";
	t[2].count = 2;
	MPI_Type_create_struct(2, lens, displs, types, &raw);
	MPI_Type_create_resized(raw, 0, sizeof(struct pair), &pair);
	MPI_Type_free(&raw);
	t[3] = (struct buftype){ "struct_int_double", pair, 3 };
	MPI_Type_vector(4, 2, 3, MPI_INT, &t[4].type);
	t[4].name = "vector_int";
	t[4].count = 5;
	t[5] = (struct buftype){ "zero", MPI_INT, 0 };
	t[6].name = NULL;
	for (int k = 2; k < 5; k++)
		MPI_Type_commit(&t[k].type);
}

/* One call: write or read count items of t at this rank's block. */
static int call(MPI_File fh, int rank, const char *op, const struct buftype *t, char *buf)
{
	MPI_Offset off = (MPI_Offset)rank * BLOCK;
	MPI_Status st;
	MPI_Count elements;
	int rc, count, bytes;

	if (!strcmp(op, "write_all") || !strcmp(op, "read_all"))
		MPI_File_seek(fh, off, MPI_SEEK_SET);
	if (!strcmp(op, "write_all"))
		rc = MPI_File_write_all(fh, buf, t->count, t->type, &st);
	else if (!strcmp(op, "write_at_all"))
		rc = MPI_File_write_at_all(fh, off, buf, t->count, t->type, &st);
	else if (!strcmp(op, "read_all"))
		rc = MPI_File_read_all(fh, buf, t->count, t->type, &st);
	else
		rc = MPI_File_read_at_all(fh, off, buf, t->count, t->type, &st);
	if (rc != MPI_SUCCESS) {
		fprintf(stderr, "collio_status: rank %d: %s of %s failed (MPI error %d)\n", rank,
			op, t->name, rc);
		return 1;
	}
	MPI_Get_count(&st, t->type, &count);
	MPI_Get_elements_x(&st, t->type, &elements);
	MPI_Get_count(&st, MPI_BYTE, &bytes);
	printf("rank %d %s %s count=%d elements=%lld bytes=%d\n", rank, op, t->name, count,
	       (long long)elements, bytes);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const ops[] = { "write_all", "read_all", "write_at_all",
					   "read_at_all", NULL };
	struct buftype types[7];
	const char *path = NULL;
	char hints[1024] = "", *wbuf, *rbuf;
	int rank, opt, rc = 0;
	MPI_Info info = MPI_INFO_NULL;
	MPI_File fh;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	while ((opt = getopt(argc, argv, "f:H:")) != -1) {
		if (opt == 'f')
			path = optarg;
		else if (opt == 'H')
			snprintf(hints, sizeof(hints), "%s", optarg);
	}
	if (!path) {
		if (!rank)
			fprintf(stderr, "usage: mpirun -np N collio_status -f FILE [-H k=v,...]\n");
		MPI_Finalize();
		return 2;
	}
	if (*hints) {
		MPI_Info_create(&info);
		cio_hints_arg(hints, info);
	}
	make_types(types);
	wbuf = malloc(BLOCK);
	rbuf = malloc(BLOCK);
	for (int i = 0; i < BLOCK; i++)
		wbuf[i] = (char)(rank * 37 + i);
	if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh)) {
		fprintf(stderr, "collio_status: rank %d: open of %s failed\n", rank, path);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	/* every call on every rank even after a failure: they are collective */
	for (int k = 0; types[k].name; k++) {
		for (int o = 0; ops[o]; o++) {
			int write = !strncmp(ops[o], "write", 5), bad;

			memset(rbuf, 0, BLOCK);
			bad = call(fh, rank, ops[o], &types[k], write ? wbuf : rbuf);
			rc |= bad;
			/* the holes of the memory type stay 0 in rbuf: compare what
			 * the type selects, packed */
			if (!bad && !write && types[k].count) {
				char *a = malloc(BLOCK), *b = malloc(BLOCK);
				int pa = 0, pb = 0;

				MPI_Pack(wbuf, types[k].count, types[k].type, a, BLOCK, &pa,
					 MPI_COMM_SELF);
				MPI_Pack(rbuf, types[k].count, types[k].type, b, BLOCK, &pb,
					 MPI_COMM_SELF);
				if (pa != pb || memcmp(a, b, pa)) {
					fprintf(stderr, "collio_status: rank %d: %s of %s read "
						"other data\n", rank, ops[o], types[k].name);
					rc = 1;
				}
				free(a);
				free(b);
			}
		}
	}
	MPI_File_close(&fh);
	MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	for (int k = 2; k < 5; k++)
		MPI_Type_free(&types[k].type);
	if (info != MPI_INFO_NULL)
		MPI_Info_free(&info);
	free(wbuf);
	free(rbuf);
	MPI_Finalize();
	return rc;
}

/*
 * collio_h5: a parallel HDF5 collective write and read, for
 * tests/test_collio.py.
 *
 *   mpirun -np N collio_h5 -f FILE [-H k=v,k=v] [-M]
 *
 * Two int datasets of odd sizes: "rows" (rank r writes 13 whole rows, one
 * contiguous piece) and "cols" (rank r writes 7 columns of every row: HDF5
 * describes it with derived datatypes and a file view), written with
 * H5FD_MPIO_COLLECTIVE through the MPI-IO driver opened with the hints,
 * then the file reopened and each rank's part read back collectively, and
 * rank 0 reading all of "cols".  -M: metadata collective too (every
 * metadata read by one rank and broadcast, metadata written with
 * write_at_all), otherwise HDF5's independent metadata I/O.  Exit 0 and
 * "h5 ok" when every value matched, 1 with a one-line message otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hdf5.h>
#include <mpi.h>

#include "cio_hints_arg.h"

enum { R = 13, C = 7 };

static int value(int set, hsize_t i, hsize_t j)
{
	return (int)(set * 1000003 + i * 1009 + j);
}

static hid_t fapl_for(MPI_Info info, int coll_md)
{
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);

	H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, info);
	if (coll_md) {
		H5Pset_all_coll_metadata_ops(fapl, 1);
		H5Pset_coll_metadata_write(fapl, 1);
	}
	return fapl;
}

/* Rank's block of dataset set: start and count in the file. */
static void block(int set, int rank, hsize_t start[2], hsize_t count[2])
{
	start[0] = set ? 0 : (hsize_t)rank * R;
	start[1] = set ? (hsize_t)rank * C : 0;
	count[0] = R;
	count[1] = C;
}

static int io(hid_t file, int set, int rank, int nprocs, int write)
{
	const char *name = set ? "cols" : "rows";
	hsize_t dims[2] = { set ? R : (hsize_t)R * nprocs, set ? (hsize_t)C * nprocs : C };
	hsize_t start[2], count[2];
	hid_t ds, fs, ms, dxpl = H5Pcreate(H5P_DATASET_XFER);
	int buf[R * C], bad = 0;
	herr_t rc;

	block(set, rank, start, count);
	H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
	if (write) {
		fs = H5Screate_simple(2, dims, NULL);
		ds = H5Dcreate2(file, name, H5T_NATIVE_INT, fs, H5P_DEFAULT, H5P_DEFAULT,
				H5P_DEFAULT);
		H5Sclose(fs);
	} else {
		ds = H5Dopen2(file, name, H5P_DEFAULT);
	}
	fs = H5Dget_space(ds);
	H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
	ms = H5Screate_simple(2, count, NULL);
	for (hsize_t i = 0; i < R; i++)
		for (hsize_t j = 0; j < C; j++)
			buf[i * C + j] = write ? value(set, start[0] + i, start[1] + j) : -1;
	rc = write ? H5Dwrite(ds, H5T_NATIVE_INT, ms, fs, dxpl, buf) :
		H5Dread(ds, H5T_NATIVE_INT, ms, fs, dxpl, buf);
	for (hsize_t i = 0; !write && i < R && !bad; i++)
		for (hsize_t j = 0; j < C && !bad; j++)
			bad = buf[i * C + j] != value(set, start[0] + i, start[1] + j);
	if (rc < 0 || bad)
		fprintf(stderr, "collio_h5: rank %d: %s of %s %s\n", rank, write ? "write" : "read",
			name, rc < 0 ? "failed" : "gave wrong values");
	H5Sclose(ms);
	H5Sclose(fs);
	H5Dclose(ds);
	H5Pclose(dxpl);
	return rc < 0 || bad;
}

/* Rank 0 alone reads all of "cols" (independent I/O). */
static int whole(hid_t file, int nprocs)
{
	hid_t ds = H5Dopen2(file, "cols", H5P_DEFAULT);
	hsize_t n = (hsize_t)R * C * nprocs;
	int *buf = malloc(n * sizeof(int)), bad = 0;

	if (H5Dread(ds, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
		bad = 1;
	for (hsize_t k = 0; k < n && !bad; k++)
		bad = buf[k] != value(1, k / (C * nprocs), k % (C * nprocs));
	if (bad)
		fprintf(stderr, "collio_h5: the whole of cols read by rank 0 is wrong\n");
	H5Dclose(ds);
	free(buf);
	return bad;
}

int main(int argc, char **argv)
{
	const char *path = NULL;
	char hints[1024] = "";
	int rank, nprocs, opt, rc = 0, coll_md = 0;
	MPI_Info info;
	hid_t fapl, file;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	while ((opt = getopt(argc, argv, "f:H:M")) != -1) {
		if (opt == 'f')
			path = optarg;
		else if (opt == 'H')
			snprintf(hints, sizeof(hints), "%s", optarg);
		else if (opt == 'M')
			coll_md = 1;
	}
	if (!path) {
		if (!rank)
			fprintf(stderr, "usage: mpirun -np N collio_h5 -f FILE [-H k=v,...] [-M]\n");
		MPI_Finalize();
		return 2;
	}
	MPI_Info_create(&info);
	cio_hints_arg(hints, info);
	fapl = fapl_for(info, coll_md);
	file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
	rc |= file < 0;
	for (int set = 0; set < 2 && !rc; set++)
		rc |= io(file, set, rank, nprocs, 1);
	H5Fclose(file);
	file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
	rc |= file < 0;
	for (int set = 0; set < 2 && !rc; set++)
		rc |= io(file, set, rank, nprocs, 0);
	if (!rc && !rank)
		rc |= whole(file, nprocs);
	H5Fclose(file);
	H5Pclose(fapl);
	MPI_Info_free(&info);
	MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (!rc && !rank)
		printf("h5 ok\n");
	MPI_Finalize();
	return rc;
}

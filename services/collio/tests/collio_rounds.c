/*
 * collio_rounds: many two-phase rounds in which every rank sends a piece to
 * every aggregator, itself included, for tests/test_collio_shim.py (beneath
 * the shim, where a self-send once hung).
 *
 *   mpirun -np N collio_rounds -f FILE -p PIECE -r ROUNDS [-H k=v,k=v]
 *
 * Rank r owns piece r of every period of N pieces of PIECE bytes (its file
 * view).  With every rank an aggregator and cb_buffer_size one period, each
 * collective of 4N pieces per rank takes 4 rounds, and in each round every
 * rank sends PIECE bytes to every rank: write_at_all then read_at_all,
 * alternately, until ROUNDS rounds have run; every read is checked against
 * what the write before it wrote.  Exit 0 and "rounds R ok" on rank 0, or
 * 1 with a one-line message.  -H: more hints (an e10_* one makes the file
 * collio's).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "cio_hints_arg.h"

enum { PER_CALL = 4 };	/* rounds of one collective */

int main(int argc, char **argv)
{
	const char *path = NULL;
	char hints[1024] = "", num[32], *wbuf, *rbuf;
	long piece = 0, rounds = 0, len, done = 0;
	int rank, nprocs, opt, rc = 0;
	MPI_Datatype block, filetype;
	MPI_Info info;
	MPI_File fh;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	while ((opt = getopt(argc, argv, "f:p:r:H:")) != -1) {
		switch (opt) {
		case 'f': path = optarg; break;
		case 'p': piece = atol(optarg); break;
		case 'r': rounds = atol(optarg); break;
		case 'H': snprintf(hints, sizeof(hints), "%s", optarg); break;
		default: path = NULL;
		}
	}
	if (!path || piece < 1 || piece > (1 << 26) || rounds < 1) {
		if (!rank)
			fprintf(stderr, "usage: mpirun -np N collio_rounds -f FILE -p PIECE "
					"-r ROUNDS [-H k=v,...]\n");
		MPI_Finalize();
		return 2;
	}
	MPI_Info_create(&info);
	snprintf(num, sizeof(num), "%ld", piece * nprocs);
	MPI_Info_set(info, "cb_buffer_size", num);
	snprintf(num, sizeof(num), "%d", nprocs);
	MPI_Info_set(info, "cb_nodes", num);
	cio_hints_arg(hints, info);
	MPI_Type_contiguous((int)piece, MPI_BYTE, &block);
	MPI_Type_create_resized(block, 0, (MPI_Aint)piece * nprocs, &filetype);
	MPI_Type_commit(&filetype);
	len = piece * PER_CALL * nprocs;
	wbuf = malloc(len);
	rbuf = malloc(len);
	if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh)) {
		fprintf(stderr, "collio_rounds: rank %d: open of %s failed\n", rank, path);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_File_set_view(fh, (MPI_Offset)rank * piece, MPI_BYTE, filetype, "native",
			  MPI_INFO_NULL);
	/* every rank runs every call, even after a failure: they are collective */
	for (long call = 0; done < rounds; call++, done += PER_CALL) {
		int write = !(call % 2), err;
		const char *bad = NULL;

		if (write)
			for (long i = 0; i < len; i++)
				wbuf[i] = (char)(i * 7 + call * 13 + rank);
		else
			memset(rbuf, 0, len);
		err = write ? MPI_File_write_at_all(fh, 0, wbuf, (int)len, MPI_BYTE,
						    MPI_STATUS_IGNORE) :
			MPI_File_read_at_all(fh, 0, rbuf, (int)len, MPI_BYTE, MPI_STATUS_IGNORE);
		if (err != MPI_SUCCESS)
			bad = "failed";
		else if (!write && memcmp(rbuf, wbuf, len))
			bad = "read other data";
		if (bad && !rc)
			fprintf(stderr, "collio_rounds: rank %d: call %ld %s\n", rank, call, bad);
		rc |= bad != NULL;
	}
	if (MPI_File_close(&fh) != MPI_SUCCESS)
		rc = 1;
	MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (!rc && !rank)
		printf("rounds %ld ok\n", done);
	MPI_Type_free(&block);
	MPI_Type_free(&filetype);
	MPI_Info_free(&info);
	free(wbuf);
	free(rbuf);
	MPI_Finalize();
	return rc;
}

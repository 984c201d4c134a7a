/*
 * collio_deferred: where the error of a deferred close reaches the program,
 * for tests/test_collio.py.
 *
 *   mpirun -np N collio_deferred -f FILE -o OTHER -b BYTES -p open|close|finalize
 *                                [-H k=v,k=v]
 *
 * Every rank writes BYTES at rank * BYTES of FILE with write_at_all and
 * closes it (with e10_deferred_close=enable the sync goes on after the
 * close), then, by -p: opens OTHER (open); or writes to OTHER, opened
 * before FILE's close, and closes it (close); or nothing; then calls
 * MPI_Finalize.  Each rank writes one line per call, "rank R STEP RESULT"
 * (RESULT: MPI_SUCCESS, MPI_ERR_IO or other), to OTHER.steps.R (a file:
 * mpirun may drop what a rank prints after MPI_Finalize), and checks every
 * result: exit 0 when all succeeded, 1 otherwise, logged last as "rank R
 * exit CODE".  Both files get the -H hints.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "cio_hints_arg.h"

static int rank;
static FILE *steps;

/* Logs the step's result (by its code: MPI_Error_class cannot be asked
 * after MPI_Finalize); 1 if it failed. */
static int step(const char *name, int rc)
{
	fprintf(steps, "rank %d %s %s\n", rank, name,
		rc == MPI_SUCCESS ? "MPI_SUCCESS" : rc == MPI_ERR_IO ? "MPI_ERR_IO" : "other");
	fflush(steps);
	return rc != MPI_SUCCESS;
}

int main(int argc, char **argv)
{
	const char *file = NULL, *other = NULL, *point = "";
	char hints[1024] = "", log[4096], *buf;
	long bytes = 0;
	int opt, bad = 0, rc;
	int amode = MPI_MODE_CREATE | MPI_MODE_WRONLY;
	MPI_Info info;
	MPI_File fh, oh = MPI_FILE_NULL;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	while ((opt = getopt(argc, argv, "f:o:b:p:H:")) != -1) {
		switch (opt) {
		case 'f': file = optarg; break;
		case 'o': other = optarg; break;
		case 'b': bytes = atol(optarg); break;
		case 'p': point = optarg; break;
		case 'H': snprintf(hints, sizeof(hints), "%s", optarg); break;
		default: file = NULL;
		}
	}
	if (!file || !other || bytes < 1 ||
	    (strcmp(point, "open") && strcmp(point, "close") && strcmp(point, "finalize"))) {
		if (!rank)
			fprintf(stderr, "usage: mpirun -np N collio_deferred -f FILE -o OTHER "
					"-b BYTES -p open|close|finalize [-H k=v,...]\n");
		MPI_Finalize();
		return 2;
	}
	snprintf(log, sizeof(log), "%s.steps.%d", other, rank);
	steps = fopen(log, "w");
	if (!steps) {
		fprintf(stderr, "collio_deferred: cannot create %s\n", log);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Info_create(&info);
	cio_hints_arg(hints, info);
	buf = malloc(bytes);
	memset(buf, 'a' + rank, bytes);
	if (MPI_File_open(MPI_COMM_WORLD, file, amode, info, &fh) != MPI_SUCCESS) {
		fprintf(stderr, "collio_deferred: open of %s failed\n", file);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (!strcmp(point, "close"))
		bad |= step("open_other", MPI_File_open(MPI_COMM_WORLD, other, amode, info, &oh));
	bad |= step("write", MPI_File_write_at_all(fh, rank * bytes, buf, bytes, MPI_BYTE,
						   MPI_STATUS_IGNORE));
	bad |= step("close", MPI_File_close(&fh));
	if (!strcmp(point, "open")) {
		rc = MPI_File_open(MPI_COMM_WORLD, other, amode, info, &oh);
		bad |= step("open_other", rc);
		if (rc == MPI_SUCCESS)
			bad |= step("close_other", MPI_File_close(&oh));
	} else if (!strcmp(point, "close") && oh != MPI_FILE_NULL) {
		bad |= step("write_other", MPI_File_write_at_all(oh, rank, buf, 1, MPI_BYTE,
								 MPI_STATUS_IGNORE));
		bad |= step("close_other", MPI_File_close(&oh));
	}
	MPI_Info_free(&info);
	free(buf);
	bad |= step("finalize", MPI_Finalize());
	fprintf(steps, "rank %d exit %d\n", rank, bad);
	fclose(steps);
	return bad;
}

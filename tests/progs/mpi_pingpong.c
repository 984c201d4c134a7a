/* SPDX-License-Identifier: MIT */
/*
 * mpi_pingpong: MPI_Send/MPI_Recv ping-pong between ranks 0 and 1.
 *
 *   mpirun -np 2 mpi_pingpong [-i ITERS] [-M MAXSIZE]
 *
 * For every size 0, 1, 2, 4, ... MAXSIZE (default 1 MiB) it runs ITERS
 * round trips (fewer for large sizes, at least 10), checks every byte that
 * came back against the pattern of that iteration, and records the median
 * half round trip.  Rank 0 prints one JSON line; exit 0 only if every byte
 * was right.  Ranks beyond 1 only take part in MPI_Init/Finalize.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static unsigned char pp_byte(size_t size, int it, size_t i)
{
	return (unsigned char)((i * 131 + (size_t)it * 7 + size) ^ (i >> 8));
}

int main(int argc, char **argv)
{
	int rank, nranks, iters = 200, c, it, n, bad = 0, first = 1;
	size_t max = 1 << 20, size, i;
	unsigned char *buf;
	double *t, t0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	while ((c = getopt(argc, argv, "i:M:")) != -1) {
		if (c == 'i')
			iters = atoi(optarg);
		else if (c == 'M')
			max = strtoull(optarg, NULL, 0);
	}
	if (nranks < 2 || iters < 1) {
		if (!rank)
			fprintf(stderr, "mpi_pingpong: needs 2 ranks and -i >= 1\n");
		MPI_Finalize();
		return 2;
	}
	buf = malloc(max ? max : 1);
	t = malloc(sizeof(double) * (size_t)iters);
	if (!buf || !t)
		MPI_Abort(MPI_COMM_WORLD, 1);
	if (!rank)
		printf("{\"test\":\"mpi_pingpong\",\"ranks\":%d,\"results\":[", nranks);
	for (size = 0; size <= max; size = size ? size * 2 : 1) {
		n = size >= 65536 ? (iters / 10 > 10 ? iters / 10 : 10) : iters;
		if (n > iters)
			n = iters;
		MPI_Barrier(MPI_COMM_WORLD);
		for (it = 0; it < n && rank < 2; it++) {
			if (rank == 0) {
				for (i = 0; i < size; i++)
					buf[i] = pp_byte(size, it, i);
				t0 = MPI_Wtime();
				MPI_Send(buf, (int)size, MPI_BYTE, 1, it, MPI_COMM_WORLD);
				memset(buf, 0, size);
				MPI_Recv(buf, (int)size, MPI_BYTE, 1, it, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				t[it] = (MPI_Wtime() - t0) / 2;
			} else {
				MPI_Recv(buf, (int)size, MPI_BYTE, 0, it, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				MPI_Send(buf, (int)size, MPI_BYTE, 0, it, MPI_COMM_WORLD);
			}
			for (i = 0; i < size; i++)
				bad += buf[i] != pp_byte(size, it, i);
		}
		if (!rank) {
			qsort(t, (size_t)n, sizeof(double), cmp_double);
			printf("%s{\"size\":%zu,\"iters\":%d,\"half_rtt_us\":%.3f}",
			       first ? "" : ",", size, n, t[n / 2] * 1e6);
			first = 0;
		}
		if (!size && !max)
			break;
	}
	MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (!rank)
		printf("],\"bad_bytes\":%d,\"ok\":%s}\n", bad, bad ? "false" : "true");
	free(buf);
	free(t);
	MPI_Finalize();
	return bad != 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * mpi_alltoallv: MPI_Alltoallv with random (seeded) per-pair sizes.
 *
 *   mpirun -np N mpi_alltoallv [-n ITERS] [-M MAXCOUNT] [-s SEED]
 *
 * In iteration it, rank src sends count(it, src, dst) bytes to dst, drawn
 * uniformly from [0, MAXCOUNT] (default 256 KiB) by a hash every rank can
 * evaluate, so receivers know what to expect.  Byte i of that block is a
 * hash of (src, dst, i, it); every received byte is checked.  Rank 0 prints
 * one JSON line; exit 0 only if every byte was right.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <mpi.h>

static uint64_t a2a_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static int a2a_count(uint64_t seed, int it, int src, int dst, int max)
{
	uint64_t h = a2a_mix(seed ^ a2a_mix(((uint64_t)it << 40) ^
					    ((uint64_t)src << 20) ^ (uint64_t)dst));

	return (int)(h % ((uint64_t)max + 1));
}

static unsigned char a2a_byte(int it, int src, int dst, int i)
{
	return (unsigned char)(i * 7 + src * 31 + dst * 131 + it * 17 + (i >> 8));
}

int main(int argc, char **argv)
{
	int rank, nranks, iters = 20, max = 256 << 10, c, it, p, i;
	int *scnt, *sdsp, *rcnt, *rdsp;
	long long bad = 0, bytes = 0;
	uint64_t seed = 42;
	unsigned char *sbuf, *rbuf;
	double t0, secs;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	while ((c = getopt(argc, argv, "n:M:s:")) != -1) {
		if (c == 'n')
			iters = atoi(optarg);
		else if (c == 'M')
			max = atoi(optarg);
		else if (c == 's')
			seed = strtoull(optarg, NULL, 0);
	}
	scnt = calloc(nranks, sizeof(int));
	sdsp = calloc(nranks, sizeof(int));
	rcnt = calloc(nranks, sizeof(int));
	rdsp = calloc(nranks, sizeof(int));
	sbuf = malloc((size_t)nranks * max + 1);
	rbuf = malloc((size_t)nranks * max + 1);
	if (!scnt || !sdsp || !rcnt || !rdsp || !sbuf || !rbuf || max < 0)
		MPI_Abort(MPI_COMM_WORLD, 1);
	t0 = MPI_Wtime();
	for (it = 0; it < iters; it++) {
		int soff = 0, roff = 0;

		for (p = 0; p < nranks; p++) {
			scnt[p] = a2a_count(seed, it, rank, p, max);
			sdsp[p] = soff;
			for (i = 0; i < scnt[p]; i++)
				sbuf[soff + i] = a2a_byte(it, rank, p, i);
			soff += scnt[p];
			rcnt[p] = a2a_count(seed, it, p, rank, max);
			rdsp[p] = roff;
			roff += rcnt[p];
		}
		for (i = 0; i < roff; i++)
			rbuf[i] = (unsigned char)~a2a_byte(it, 0, 0, i);
		MPI_Alltoallv(sbuf, scnt, sdsp, MPI_BYTE, rbuf, rcnt, rdsp, MPI_BYTE,
			      MPI_COMM_WORLD);
		for (p = 0; p < nranks; p++)
			for (i = 0; i < rcnt[p]; i++)
				bad += rbuf[rdsp[p] + i] != a2a_byte(it, p, rank, i);
		bytes += roff;
	}
	secs = MPI_Wtime() - t0;
	MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(MPI_IN_PLACE, &bytes, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
	if (!rank)
		printf("{\"test\":\"mpi_alltoallv\",\"ranks\":%d,\"iters\":%d,"
		       "\"bytes\":%lld,\"seconds\":%.3f,\"bad_bytes\":%lld,\"ok\":%s}\n",
		       nranks, iters, bytes, secs, bad, bad ? "false" : "true");
	free(scnt);
	free(sdsp);
	free(rcnt);
	free(rdsp);
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return bad != 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * mpi_onesided: MPI one-sided communication with both synchronisation modes.
 *
 *   mpirun -np N mpi_onesided [-n ITERS] [-c COUNT]
 *
 * Each rank exposes COUNT (default 4096) int64 with MPI_Win_create.  Per
 * iteration:
 *   fence:   MPI_Put to the right neighbour, MPI_Get from it, MPI_Accumulate
 *            (MPI_SUM) from every rank into every rank; all checked.
 *   passive: every rank increments rank 0's counter COUNT/64 times inside
 *            exclusive MPI_Win_lock/unlock (get, flush, put), which only
 *            adds up if the lock is really exclusive; then every rank does
 *            MPI_Accumulate under a shared lock on every target.  Checked
 *            through a locked MPI_Get after a barrier.
 * Rank 0 prints one JSON line; exit 0 only if every value was right.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <mpi.h>

static int64_t os_val(int it, int rank, int i)
{
	return (int64_t)it * 1000003 + (int64_t)rank * 10007 + i;
}

/* Fence epochs: put, get and accumulate. */
static long os_fence(MPI_Win win, int64_t *base, int64_t *tmp, int count,
		     int it, int rank, int n)
{
	int half = count / 2, right = (rank + 1) % n, left = (rank + n - 1) % n, i, t;
	long bad = 0;

	for (i = 0; i < count; i++)
		base[i] = i < half ? -1 : 0;
	for (i = 0; i < half; i++)
		tmp[i] = os_val(it, rank, i);
	MPI_Win_fence(0, win);
	MPI_Put(tmp, half, MPI_INT64_T, right, 0, half, MPI_INT64_T, win);
	MPI_Win_fence(0, win);
	for (i = 0; i < half; i++)
		bad += base[i] != os_val(it, left, i);
	for (i = 0; i < half; i++)
		tmp[i] = -1;
	MPI_Win_fence(0, win);
	MPI_Get(tmp, half, MPI_INT64_T, right, 0, half, MPI_INT64_T, win);
	MPI_Win_fence(0, win);
	for (i = 0; i < half; i++)
		bad += tmp[i] != os_val(it, rank, i);
	for (i = 0; i < half; i++)
		tmp[i] = (int64_t)(rank + 1) * (i + it);
	for (t = 0; t < n; t++)
		MPI_Accumulate(tmp, half, MPI_INT64_T, t, half, half, MPI_INT64_T,
			       MPI_SUM, win);
	MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
	for (i = 0; i < half; i++)
		bad += base[half + i] != (int64_t)(i + it) * n * (n + 1) / 2;
	return bad;
}

/* Passive target: exclusive read-modify-write and shared accumulate. */
static long os_passive(MPI_Win win, int64_t *base, int64_t *tmp, int count,
		       int it, int rank, int n)
{
	int incs = count / 64 ? count / 64 : 1, half = count / 2, i, t;
	int64_t v;
	long bad = 0;

	for (i = 0; i < count; i++)
		base[i] = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	for (i = 0; i < incs; i++) {
		MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
		MPI_Get(&v, 1, MPI_INT64_T, 0, count - 1, 1, MPI_INT64_T, win);
		MPI_Win_flush(0, win);
		v++;
		MPI_Put(&v, 1, MPI_INT64_T, 0, count - 1, 1, MPI_INT64_T, win);
		MPI_Win_unlock(0, win);
	}
	for (i = 0; i < half; i++)
		tmp[i] = (int64_t)(rank + 1) * (i + it + 1);
	for (t = 0; t < n; t++) {
		MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
		MPI_Accumulate(tmp, half, MPI_INT64_T, t, 0, half, MPI_INT64_T,
			       MPI_SUM, win);
		MPI_Win_unlock(t, win);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
	MPI_Get(tmp, count, MPI_INT64_T, rank, 0, count, MPI_INT64_T, win);
	MPI_Win_unlock(rank, win);
	for (i = 0; i < half; i++)
		bad += tmp[i] != (int64_t)(i + it + 1) * n * (n + 1) / 2;
	if (rank == 0)
		bad += tmp[count - 1] != (int64_t)incs * n;
	MPI_Barrier(MPI_COMM_WORLD);
	return bad;
}

int main(int argc, char **argv)
{
	int rank, n, iters = 10, count = 4096, c, it;
	int64_t *base, *tmp;
	long bad = 0;
	double t0, secs;
	MPI_Win win;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	while ((c = getopt(argc, argv, "n:c:")) != -1) {
		if (c == 'n')
			iters = atoi(optarg);
		else if (c == 'c')
			count = atoi(optarg);
	}
	if (count < 4 || count % 2) {
		if (!rank)
			fprintf(stderr, "mpi_onesided: -c must be even and >= 4\n");
		MPI_Finalize();
		return 2;
	}
	base = calloc((size_t)count, sizeof(int64_t));
	tmp = calloc((size_t)count, sizeof(int64_t));
	if (!base || !tmp)
		MPI_Abort(MPI_COMM_WORLD, 1);
	MPI_Win_create(base, (MPI_Aint)count * (MPI_Aint)sizeof(int64_t),
		       sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
	t0 = MPI_Wtime();
	for (it = 0; it < iters; it++) {
		bad += os_fence(win, base, tmp, count, it, rank, n);
		bad += os_passive(win, base, tmp, count, it, rank, n);
	}
	secs = MPI_Wtime() - t0;
	MPI_Win_free(&win);
	MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	if (!rank)
		printf("{\"test\":\"mpi_onesided\",\"ranks\":%d,\"iters\":%d,\"count\":%d,"
		       "\"seconds\":%.3f,\"bad_values\":%ld,\"ok\":%s}\n", n, iters,
		       count, secs, bad, bad ? "false" : "true");
	free(base);
	free(tmp);
	MPI_Finalize();
	return bad != 0;
}

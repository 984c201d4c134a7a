/* SPDX-License-Identifier: MIT */
/*
 * ns_dist.c: nowsort's first timed phase, the pipelined distribution.
 *
 * The input is read in chunks; every record goes to the rank that owns its
 * key, into this rank's own array or a send buffer of one chunk per
 * destination.  A full buffer is sent as one bulk message (MPI_Isend) when
 * the next record for it comes, and filling goes on in the destination's
 * second buffer once that buffer's previous send is done.  Every wait
 * (a buffer to be free, the last messages) receives what has arrived, and
 * so does the end of every chunk: reading, sending and receiving overlap,
 * and two ranks sending to each other never block.  The last buffer to
 * each destination, maybe empty, goes with NS_TAG_LAST.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "ns.h"

/* Room for more records in the receive array. */
static int ns_dist_room(struct ns_dist *x, int64_t more)
{
	int64_t cap = x->rcap;
	void *q;

	if (x->rn + more <= cap)
		return 0;
	while (cap < x->rn + more)
		cap = cap ? cap + cap / 2 : 1024;
	q = realloc(x->rbuf, (size_t)cap * NS_REC);
	if (!q) {
		fprintf(stderr, "nowsort: rank %d: out of memory for %lld received records\n",
			x->p->rank, (long long)cap);
		return -ENOMEM;
	}
	x->rbuf = q;
	x->rcap = cap;
	return 0;
}

/* Receives every message that has arrived. */
static int ns_dist_poll(struct ns_dist *x)
{
	MPI_Status st;
	int flag, bytes, ret;

	for (;;) {
		MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
		if (!flag)
			return 0;
		MPI_Get_count(&st, MPI_BYTE, &bytes);
		if (bytes % NS_REC || (st.MPI_TAG != NS_TAG_DATA && st.MPI_TAG != NS_TAG_LAST)) {
			fprintf(stderr, "nowsort: rank %d: bad message of %d bytes, tag %d from rank %d\n",
				x->p->rank, bytes, st.MPI_TAG, st.MPI_SOURCE);
			return -EPROTO;
		}
		ret = ns_dist_room(x, bytes / NS_REC);
		if (ret)
			return ret;
		MPI_Recv(x->rbuf + x->rn * NS_REC, bytes, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG,
			 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		wl_msgs_recvd(x->m, (size_t)bytes);
		if (x->corrupt && bytes) {
			x->rbuf[x->rn * NS_REC + 50] ^= 0x20;	/* a payload byte */
			x->corrupt = false;
		}
		x->rn += bytes / NS_REC;
		x->lasts += st.MPI_TAG == NS_TAG_LAST;
	}
}

/* Waits for one send while receiving, so that two senders never block. */
static int ns_dist_wait(struct ns_dist *x, MPI_Request *rq)
{
	int done = 0, ret;

	for (;;) {
		MPI_Test(rq, &done, MPI_STATUS_IGNORE);
		if (done)
			return 0;
		ret = ns_dist_poll(x);
		if (ret)
			return ret;
	}
}

/* Sends dest's current buffer and switches to the other (once it is free). */
static int ns_dist_send(struct ns_dist *x, int d, int tag)
{
	int w = x->cur[d];
	size_t bytes = x->fill[d] * NS_REC;

	MPI_Isend(x->sbuf[2 * d + w], (int)bytes, MPI_BYTE, d, tag, MPI_COMM_WORLD,
		  &x->sreq[2 * d + w]);
	wl_msgs_sent(x->m, bytes);
	x->cur[d] = w ^= 1;
	x->fill[d] = 0;
	return ns_dist_wait(x, &x->sreq[2 * d + w]);
}

static int ns_dist_put(struct ns_dist *x, const unsigned char *rec)
{
	int d = ns_owner(rec, x->p->nranks), ret;

	if (d == x->p->rank) {
		ret = ns_dist_room(x, 1);
		if (ret)
			return ret;
		memcpy(x->rbuf + x->rn++ * NS_REC, rec, NS_REC);
		return 0;
	}
	if (x->fill[d] == x->per) {
		ret = ns_dist_send(x, d, NS_TAG_DATA);
		if (ret)
			return ret;
	}
	memcpy(x->sbuf[2 * d + x->cur[d]] + x->fill[d]++ * NS_REC, rec, NS_REC);
	return 0;
}

int ns_dist_init(struct ns_dist *x, const struct wl_prog *p, struct wl_msgs *m,
			size_t per, int64_t expect)
{
	int i, n = 2 * p->nranks;

	memset(x, 0, sizeof(*x));
	x->p = p;
	x->m = m;
	x->per = per;
	x->sbuf = calloc((size_t)n, sizeof(*x->sbuf));
	x->sreq = malloc(sizeof(*x->sreq) * (size_t)n);
	x->fill = calloc((size_t)p->nranks, sizeof(*x->fill));
	x->cur = calloc((size_t)p->nranks, sizeof(*x->cur));
	if (!x->sbuf || !x->sreq || !x->fill || !x->cur)
		goto nomem;
	for (i = 0; i < n; i++) {
		x->sreq[i] = MPI_REQUEST_NULL;
		if (i / 2 != p->rank && !(x->sbuf[i] = malloc(per * NS_REC)))
			goto nomem;
	}
	return ns_dist_room(x, expect);
nomem:
	fprintf(stderr, "nowsort: rank %d: out of memory for %d send buffers of %zu bytes\n",
		p->rank, n, per * NS_REC);
	return -ENOMEM;
}

void ns_dist_fini(struct ns_dist *x)
{
	int i;

	for (i = 0; x->sbuf && i < 2 * x->p->nranks; i++)
		free(x->sbuf[i]);
	free(x->sbuf);
	free(x->sreq);
	free(x->fill);
	free(x->cur);
	free(x->rbuf);
	memset(x, 0, sizeof(*x));
}

/*
 * The first timed phase: read path (n records) in chunks, distributing
 * every record, then send the last buffers and receive until every other
 * rank's last message is in.  *read_s: the time inside reads.
 */
int ns_distribute(struct ns_dist *x, const char *path, int64_t n, unsigned char *chunk,
			 double *read_s)
{
	int nr = x->p->nranks, me = x->p->rank, d, ret, ret2;
	size_t want, got, k;
	int64_t left = n;
	struct ns_file f;
	double t;

	t = MPI_Wtime();
	ret = ns_file_open(&f, path, me, false);
	*read_s += MPI_Wtime() - t;
	if (ret)
		return ret;
	while (left > 0) {
		want = (size_t)(left < (int64_t)x->per ? left : (int64_t)x->per) * NS_REC;
		t = MPI_Wtime();
		ret = ns_file_read(&f, chunk, want, &got);
		*read_s += MPI_Wtime() - t;
		if (ret)
			goto close;
		if (got != want) {
			fprintf(stderr, "nowsort: rank %d: %s ends after %lld of %lld bytes\n", me,
				path, (long long)((n - left) * NS_REC + (int64_t)got),
				(long long)(n * NS_REC));
			ret = -EIO;
			goto close;
		}
		for (k = 0; k < got; k += NS_REC) {
			ret = ns_dist_put(x, chunk + k);
			if (ret)
				goto close;
		}
		left -= (int64_t)(got / NS_REC);
		ret = ns_dist_poll(x);
		if (ret)
			goto close;
	}
	t = MPI_Wtime();
	ret = ns_file_close(&f, false);
	*read_s += MPI_Wtime() - t;
	if (ret)
		return ret;
	for (d = 0; d < nr; d++) {
		if (d == me)
			continue;
		ret = ns_dist_send(x, d, NS_TAG_LAST);
		if (ret)
			return ret;
	}
	while (x->lasts < nr - 1) {
		ret = ns_dist_poll(x);
		if (ret)
			return ret;
	}
	for (d = 0; d < 2 * nr; d++) {
		ret = ns_dist_wait(x, &x->sreq[d]);
		if (ret)
			return ret;
	}
	return 0;
close:
	ret2 = ns_file_close(&f, false);
	(void)ret2;
	return ret;
}

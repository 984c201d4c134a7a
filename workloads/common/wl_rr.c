/* SPDX-License-Identifier: MIT */
/*
 * wl_rr.c: remote reads by request/reply, served while waiting (wl_rr.h).
 */
#include "wl_rr.h"

#define RR_TAG_REQ	71
#define RR_TAG_REP	72
#define RR_TAG_OR	80	/* + barrier round */

static void rr_post(struct rr *rr)
{
	MPI_Irecv(&rr->key_in, 1, MPI_INT64_T, MPI_ANY_SOURCE, RR_TAG_REQ, rr->comm,
		  &rr->inbox);
}

void rr_open(struct rr *rr, MPI_Comm comm, rr_serve_fn serve, void *arg,
	     struct wl_msgs *msgs)
{
	MPI_Comm_rank(comm, &rr->rank);
	MPI_Comm_size(comm, &rr->nranks);
	rr->comm = comm;
	rr->serve = serve;
	rr->arg = arg;
	rr->msgs = msgs;
	rr_post(rr);
}

/* The inbox completed (status st): answer it and post the next one. */
static void rr_answer(struct rr *rr, const MPI_Status *st)
{
	int64_t val = rr->serve(rr->arg, rr->key_in);

	wl_msgs_recvd(rr->msgs, sizeof(rr->key_in));
	/*
	 * The reader posted its reply receive before it sent the request, so
	 * this small send is matched at once and cannot block on the reader.
	 */
	MPI_Send(&val, 1, MPI_INT64_T, st->MPI_SOURCE, RR_TAG_REP, rr->comm);
	wl_msgs_sent(rr->msgs, sizeof(val));
	rr_post(rr);
}

/*
 * Waits until every request in reqs[0..n) is complete, serving the inbox
 * meanwhile.  reqs[n] is scratch space for the inbox handle.
 */
static void rr_wait(struct rr *rr, MPI_Request *reqs, int n)
{
	MPI_Status st;
	int idx, left = 0, i;

	for (i = 0; i < n; i++)
		left += reqs[i] != MPI_REQUEST_NULL;
	while (left) {
		reqs[n] = rr->inbox;
		MPI_Waitany(n + 1, reqs, &idx, &st);
		if (idx == n) {
			rr_answer(rr, &st);
			continue;
		}
		reqs[n] = MPI_REQUEST_NULL;
		left--;
	}
}

int64_t rr_read(struct rr *rr, int owner, int64_t key)
{
	MPI_Request reqs[2];
	int64_t val = 0;

	MPI_Irecv(&val, 1, MPI_INT64_T, owner, RR_TAG_REP, rr->comm, &reqs[0]);
	MPI_Send(&key, 1, MPI_INT64_T, owner, RR_TAG_REQ, rr->comm);
	wl_msgs_sent(rr->msgs, sizeof(key));
	rr_wait(rr, reqs, 1);
	wl_msgs_recvd(rr->msgs, sizeof(val));
	return val;
}

int rr_rounds(int nranks)
{
	int k = 0;

	while ((1 << k) < nranks)
		k++;
	return k;
}

int rr_allor(struct rr *rr, int flag)
{
	int32_t out, in;
	MPI_Request reqs[3];
	int k, rounds = rr_rounds(rr->nranks), dist;

	flag = !!flag;
	for (k = 0; k < rounds; k++) {
		dist = 1 << k;
		out = flag;
		in = 0;
		/*
		 * Each round has its own tag and its own pair of peers, and MPI
		 * keeps order per sender and tag, so a token of the next barrier
		 * from a rank that ran ahead cannot match this one's receive.
		 */
		MPI_Irecv(&in, 1, MPI_INT32_T, (rr->rank - dist + rr->nranks) % rr->nranks,
			  RR_TAG_OR + k, rr->comm, &reqs[0]);
		MPI_Isend(&out, 1, MPI_INT32_T, (rr->rank + dist) % rr->nranks,
			  RR_TAG_OR + k, rr->comm, &reqs[1]);
		wl_msgs_sent(rr->msgs, sizeof(out));
		rr_wait(rr, reqs, 2);
		wl_msgs_recvd(rr->msgs, sizeof(in));
		flag |= !!in;
	}
	return flag;
}

void rr_close(struct rr *rr)
{
	rr_allor(rr, 0);
	MPI_Cancel(&rr->inbox);
	MPI_Wait(&rr->inbox, MPI_STATUS_IGNORE);
}

/* SPDX-License-Identifier: MIT */
/*
 * wl_sortcheck.c: keys, options, checking and critical path of the sorts
 * (radix, radb, sample); see wl_sortcheck.h.
 *
 * Every collective here runs outside the timed region, except what the
 * programs call themselves.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "wl_hash.h"
#include "wl_part.h"
#include "wl_sortcheck.h"

int sc_opt_keys(const struct wl_prog *p, int opt, const char *arg, struct sc_keys *k)
{
	int64_t seed;
	int ret;

	switch (opt) {
	case 'n':
		return wl_opt_int(p, opt, arg, 0, SC_KEYS_MAX, &k->per_rank);
	case 'N':
		ret = wl_opt_int(p, opt, arg, 0, SC_TOTAL_MAX, &k->total);
		k->have_total = !ret;
		return ret;
	case 's':
		ret = wl_opt_int(p, opt, arg, 0, INT64_MAX, &seed);
		if (!ret)
			k->seed = (uint64_t)seed;
		return ret;
	default:
		return wl_opt_unknown(p, opt);
	}
}

int sc_opts_finish(const struct wl_prog *p, struct sc_keys *k)
{
	int64_t share;

	if (!k->have_total) {
		if (k->per_rank > SC_TOTAL_MAX / p->nranks) {
			if (!p->rank)
				fprintf(stderr, "%s: bad value %" PRId64 " for -n: at most %lld keys in all, so -n must be <= %lld with %d ranks\n",
					p->name, k->per_rank, SC_TOTAL_MAX,
					SC_TOTAL_MAX / p->nranks, p->nranks);
			return -EINVAL;
		}
		k->total = k->per_rank * p->nranks;
		return 0;
	}
	share = (k->total + p->nranks - 1) / p->nranks;
	if (share > SC_KEYS_MAX) {
		if (!p->rank)
			fprintf(stderr, "%s: bad value %" PRId64 " for -N: at most %lld keys per rank, so -N must be <= %lld with %d rank%s\n",
				p->name, k->total, SC_KEYS_MAX, SC_KEYS_MAX * p->nranks,
				p->nranks, p->nranks == 1 ? "" : "s");
		return -EINVAL;
	}
	return 0;
}

uint32_t sc_key(uint64_t seed, int64_t g)
{
	return (uint32_t)(wl_mix64(wl_mix64(seed + WL_GOLDEN) + (uint64_t)g * WL_GOLDEN) >> 32);
}

void sc_gen(uint32_t *keys, int64_t lo, int64_t n, uint64_t seed)
{
	int64_t i;

	for (i = 0; i < n; i++)
		keys[i] = sc_key(seed, lo + i);
}

void sc_sort(uint32_t *keys, uint32_t *tmp, int64_t n)
{
	int64_t cnt[256], i, sum, c;
	uint32_t *src = keys, *dst = tmp, *t;
	int shift, d;

	for (shift = 0; shift < 32; shift += 8) {
		memset(cnt, 0, sizeof(cnt));
		for (i = 0; i < n; i++)
			cnt[(src[i] >> shift) & 0xff]++;
		for (d = 0, sum = 0; d < 256; d++) {
			c = cnt[d];
			cnt[d] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			dst[cnt[(src[i] >> shift) & 0xff]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	/* four passes: the result is back in keys */
}

static void sc_sum_local(const uint32_t *keys, int64_t n, struct sc_sum *s)
{
	int64_t i;

	*s = (struct sc_sum){ .count = (uint64_t)n };
	for (i = 0; i < n; i++) {
		s->sum += wl_mix64((uint64_t)keys[i] + WL_GOLDEN);
		s->xor ^= wl_mix64((uint64_t)keys[i] * 0xd6e8feb86659fd93ULL + 0x3c6ef372fe94f82bULL);
	}
}

void sc_sum_reduce(const uint32_t *keys, int64_t n, struct sc_sum *s)
{
	struct sc_sum mine;
	uint64_t in[2], out[2];

	sc_sum_local(keys, n, &mine);
	in[0] = mine.count;
	in[1] = mine.sum;
	/* unsigned sums wrap modulo 2^64, as the local ones do */
	MPI_Allreduce(in, out, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(&mine.xor, &s->xor, 1, MPI_UINT64_T, MPI_BXOR, MPI_COMM_WORLD);
	s->count = out[0];
	s->sum = out[1];
}

/* Per rank: keys, first key, last key, first index i with keys[i] > keys[i + 1] or -1. */
enum { SC_ROW_N, SC_ROW_FIRST, SC_ROW_LAST, SC_ROW_DESCENT, SC_ROW };

int sc_check(const struct wl_prog *p, const uint32_t *keys, int64_t n,
	     const struct sc_sum *before)
{
	int64_t row[SC_ROW] = { n, 0, 0, -1 }, *all, i, prev = -1;
	struct sc_sum after;
	int r, ok = 1, prev_rank = -1;

	all = malloc(sizeof(*all) * SC_ROW * (size_t)p->nranks);
	/* every rank allocates, so a failure anywhere is seen by everyone */
	ok = all != NULL;
	MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	if (!ok) {
		free(all);
		return -ENOMEM;
	}
	if (n) {
		row[SC_ROW_FIRST] = keys[0];
		row[SC_ROW_LAST] = keys[n - 1];
	}
	for (i = 0; i + 1 < n; i++) {
		if (keys[i] > keys[i + 1]) {
			row[SC_ROW_DESCENT] = i;
			break;
		}
	}
	MPI_Allgather(row, SC_ROW, MPI_INT64_T, all, SC_ROW, MPI_INT64_T, MPI_COMM_WORLD);
	sc_sum_reduce(keys, n, &after);

	for (r = 0; r < p->nranks && ok; r++) {
		const int64_t *x = all + SC_ROW * r;

		if (x[SC_ROW_DESCENT] >= 0) {
			ok = 0;
			if (!p->rank)
				fprintf(stderr, "%s: rank %d's keys are not sorted: index %" PRId64
					" > index %" PRId64 "\n", p->name, r,
					x[SC_ROW_DESCENT], x[SC_ROW_DESCENT] + 1);
			break;
		}
		if (!x[SC_ROW_N])
			continue;
		if (prev_rank >= 0 && prev > x[SC_ROW_FIRST]) {
			ok = 0;
			if (!p->rank)
				fprintf(stderr, "%s: not sorted across ranks: rank %d ends with %" PRId64
					", rank %d starts with %" PRId64 "\n", p->name,
					prev_rank, prev, r, x[SC_ROW_FIRST]);
			break;
		}
		prev = x[SC_ROW_LAST];
		prev_rank = r;
	}
	if (ok && (after.count != before->count || after.sum != before->sum ||
		   after.xor != before->xor)) {
		ok = 0;
		if (!p->rank)
			fprintf(stderr, "%s: output is not a permutation of the input: %" PRIu64
				" keys, checksum %016" PRIx64 "/%016" PRIx64 " before; %" PRIu64
				" keys, checksum %016" PRIx64 "/%016" PRIx64 " after\n", p->name,
				before->count, before->sum, before->xor, after.count, after.sum,
				after.xor);
	}
	free(all);
	return ok;
}

void sc_warmup(const struct wl_prog *p)
{
	int n = p->nranks, k, nreq = 0, *rbuf, sbuf = p->rank;
	MPI_Request *req;

	if (n == 1)
		return;
	rbuf = malloc(sizeof(*rbuf) * (size_t)n);
	req = malloc(sizeof(*req) * 2 * (size_t)n);
	if (!rbuf || !req) {
		/* not worth failing for: the first timed messages set up instead */
		free(rbuf);
		free(req);
		return;
	}
	for (k = 1; k < n; k++)
		MPI_Irecv(&rbuf[k], 1, MPI_INT, (p->rank - k + n) % n, SC_WARM_TAG,
			  MPI_COMM_WORLD, &req[nreq++]);
	for (k = 1; k < n; k++)
		MPI_Isend(&sbuf, 1, MPI_INT, (p->rank + k) % n, SC_WARM_TAG, MPI_COMM_WORLD,
			  &req[nreq++]);
	MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
	free(rbuf);
	free(req);
}

int sc_crit_phases(const struct wl_prog *p, const struct sc_phase *ph, int nphases,
		   struct wl_critical *crit)
{
	int64_t *mine, *all;
	int ok, i, r;

	*crit = (struct wl_critical){ 0 };
	if (!nphases)
		return 0;
	mine = malloc(sizeof(*mine) * 3 * (size_t)nphases);
	all = malloc(sizeof(*all) * 3 * (size_t)nphases * (size_t)p->nranks);
	ok = mine && all;
	MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	if (!ok) {
		free(mine);
		free(all);
		return -ENOMEM;
	}
	for (i = 0; i < nphases; i++) {
		mine[3 * i] = ph[i].sent;
		mine[3 * i + 1] = ph[i].recvd;
		mine[3 * i + 2] = ph[i].sent_bytes;
	}
	MPI_Allgather(mine, 3 * nphases, MPI_INT64_T, all, 3 * nphases, MPI_INT64_T,
		      MPI_COMM_WORLD);
	for (i = 0; i < nphases; i++) {
		int64_t any = 0, busy = -1, sends = 0, recvs = 0, bytes = 0;

		for (r = 0; r < p->nranks; r++) {
			const int64_t *x = all + 3 * ((size_t)r * (size_t)nphases + (size_t)i);

			any += x[0];
			if (x[0] + x[1] > busy) {
				busy = x[0] + x[1];
				sends = x[0];
				recvs = x[1];
			}
			if (x[2] > bytes)
				bytes = x[2];
		}
		crit->path += any > 0;
		crit->sends += sends;
		crit->recvs += recvs;
		crit->bytes += bytes;
	}
	free(mine);
	free(all);
	return 0;
}

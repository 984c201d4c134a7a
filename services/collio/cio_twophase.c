/*
 * cio_twophase.c: two-phase collective I/O.  The range every rank touches is
 * cut into the aggregators' file domains (cio_domain.c); each round, every
 * aggregator takes the next cb_buffer_size bytes of its domain.  A rank
 * sends each aggregator the segments of its access that fall in that
 * window (counts by MPI_Alltoall, then the segment lists and the data point
 * to point); the aggregator writes the window's covered runs (holes are
 * never written, so no read-modify-write) to the cache or the global file.
 * Reads run the same rounds backwards.  A rank's data for one window is one
 * contiguous piece of its packed buffer, because its segments are in file
 * order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cio.h"

enum { TAG_SEGS = 7301, TAG_DATA };

/* This rank's part in one round. */
struct round {
	int64_t *cnt;		/* [2 * p]: segments and bytes this rank sends rank p */
	int64_t *rcnt;		/* [2 * p]: what rank p sends this rank */
	struct cio_seg *segs;	/* clipped segments, aggregator after aggregator */
	int64_t *seg_first;	/* [nagg + 1]: first of aggregator a's in segs */
	int64_t *data_off;	/* [nagg]: where its data starts in the packed buffer */
	int64_t wstart, wend;	/* this rank's own window when it is an aggregator */
	int my_agg;		/* this rank's aggregator number, -1 if none */
};

struct plan {
	const struct cio_flat *acc;
	int64_t *pref;		/* data bytes before access segment i */
	struct cio_domains dom;
	int64_t cb;
};

static double now(void)
{
	return MPI_Wtime();
}

/* First access segment that ends after off. */
static size_t lower(const struct cio_flat *acc, int64_t off)
{
	size_t lo = 0, hi = acc->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (acc->seg[mid].off + acc->seg[mid].len <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int plan_make(struct cio_file *f, const struct cio_flat *acc, struct plan *pl)
{
	int64_t lim[2], glim[2];
	int ret;

	pl->acc = acc;
	pl->cb = f->hints.cb_buffer_size;
	pl->pref = malloc((acc->n + 1) * sizeof(*pl->pref));
	if (!pl->pref)
		return -ENOMEM;
	pl->pref[0] = 0;
	for (size_t i = 0; i < acc->n; i++)
		pl->pref[i + 1] = pl->pref[i] + acc->seg[i].len;
	lim[0] = acc->n ? acc->seg[0].off : INT64_MAX;
	lim[1] = acc->n ? -(acc->seg[acc->n - 1].off + acc->seg[acc->n - 1].len) : INT64_MAX;
	MPI_Allreduce(lim, glim, 2, MPI_INT64_T, MPI_MIN, f->comm);
	if (glim[0] == INT64_MAX)
		glim[0] = glim[1] = 0;
	ret = cio_domains_make(&pl->dom, glim[0], -glim[1], f->hints.cb_nodes, f->nprocs,
			       f->hints.striping_unit, pl->cb);
	if (ret)
		free(pl->pref);
	return ret;
}

static void plan_free(struct plan *pl)
{
	free(pl->pref);
	cio_domains_free(&pl->dom);
}

static void round_free(struct round *rd)
{
	free(rd->cnt);
	free(rd->rcnt);
	free(rd->segs);
	free(rd->seg_first);
	free(rd->data_off);
}

/* What this rank exchanges in round r; the counts go by MPI_Alltoall. */
static int round_make(struct cio_file *f, const struct plan *pl, int64_t r, struct round *rd)
{
	const struct cio_flat *acc = pl->acc;
	int nagg = pl->dom.nagg;
	size_t k = 0;

	memset(rd, 0, sizeof(*rd));
	rd->my_agg = -1;
	rd->cnt = calloc(2 * f->nprocs, sizeof(*rd->cnt));
	rd->rcnt = calloc(2 * f->nprocs, sizeof(*rd->rcnt));
	rd->segs = malloc((acc->n + nagg + 1) * sizeof(*rd->segs));
	rd->seg_first = malloc((nagg + 1) * sizeof(*rd->seg_first));
	rd->data_off = malloc(nagg * sizeof(*rd->data_off));
	if (!rd->cnt || !rd->rcnt || !rd->segs || !rd->seg_first || !rd->data_off) {
		round_free(rd);
		memset(rd, 0, sizeof(*rd));
		return -ENOMEM;
	}
	for (int a = 0; a < nagg; a++) {
		int64_t ws = pl->dom.start[a] + r * pl->cb, we = ws + pl->cb;
		int64_t *c = &rd->cnt[2 * pl->dom.agg_rank[a]];
		size_t i;

		if (we > pl->dom.end[a])
			we = pl->dom.end[a];
		if (pl->dom.agg_rank[a] == f->rank) {
			rd->my_agg = a;
			rd->wstart = ws;
			rd->wend = we;
		}
		rd->seg_first[a] = k;
		rd->data_off[a] = 0;
		if (ws >= we)
			continue;
		i = lower(acc, ws);
		if (i < acc->n)
			rd->data_off[a] = pl->pref[i] + (ws > acc->seg[i].off ? ws - acc->seg[i].off : 0);
		for (; i < acc->n && acc->seg[i].off < we; i++) {
			int64_t s = acc->seg[i].off > ws ? acc->seg[i].off : ws;
			int64_t e = acc->seg[i].off + acc->seg[i].len;

			e = e < we ? e : we;
			rd->segs[k].off = s;
			rd->segs[k].len = e - s;
			c[0]++;
			c[1] += e - s;
			k++;
		}
	}
	rd->seg_first[nagg] = k;
	MPI_Alltoall(rd->cnt, 2, MPI_INT64_T, rd->rcnt, 2, MPI_INT64_T, f->comm);
	return 0;
}

static int seg_cmp(const void *a, const void *b)
{
	const struct cio_seg *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

static int pwrite_all(int fd, const char *buf, int64_t len, int64_t off)
{
	while (len > 0) {
		ssize_t n = pwrite(fd, buf, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= n;
		off += n;
	}
	return 0;
}

static int agg_write(struct cio_file *f, const char *buf, int64_t len, int64_t off)
{
	if (f->cache)
		return cio_cache_write(f->cache, buf, len, off);
	return pwrite_all(f->gfd, buf, len, off);
}

/* Every source's segment list and data, as received in one round. */
struct inbox {
	struct cio_seg *segs;
	char *data;
	int64_t nsegs, nbytes;
	MPI_Request *req;
	int nreq;
};

static int inbox_make(struct cio_file *f, const struct round *rd, struct inbox *in)
{
	memset(in, 0, sizeof(*in));
	for (int p = 0; p < f->nprocs; p++) {
		in->nsegs += rd->rcnt[2 * p];
		in->nbytes += rd->rcnt[2 * p + 1];
	}
	in->segs = malloc((in->nsegs + 1) * sizeof(*in->segs));
	in->data = malloc(in->nbytes + 1);
	in->req = malloc((4 * f->nprocs + 1) * sizeof(*in->req));
	if (!in->segs || !in->data || !in->req)
		return -ENOMEM;
	return 0;
}

static void inbox_free(struct inbox *in)
{
	free(in->segs);
	free(in->data);
	free(in->req);
}

/* Posts the receives of segment lists (and, with data, of the data). */
static void post_recvs(struct cio_file *f, const struct round *rd, struct inbox *in, int data)
{
	int64_t so = 0, bo = 0;

	for (int p = 0; p < f->nprocs; p++) {
		int64_t ns = rd->rcnt[2 * p], nb = rd->rcnt[2 * p + 1];

		if (!ns)
			continue;
		MPI_Irecv(&in->segs[so], (int)(2 * ns), MPI_INT64_T, p, TAG_SEGS, f->comm,
			  &in->req[in->nreq++]);
		if (data)
			MPI_Irecv(&in->data[bo], (int)nb, MPI_BYTE, p, TAG_DATA, f->comm,
				  &in->req[in->nreq++]);
		so += ns;
		bo += nb;
	}
}

/* Sends each aggregator its segment list (and, with data, the data). */
static void post_sends(struct cio_file *f, const struct plan *pl, const struct round *rd,
		       const char *buf, struct inbox *in, int data)
{
	for (int a = 0; a < pl->dom.nagg; a++) {
		int p = pl->dom.agg_rank[a];
		int64_t ns = rd->cnt[2 * p], nb = rd->cnt[2 * p + 1];

		if (!ns)
			continue;
		MPI_Isend(&rd->segs[rd->seg_first[a]], (int)(2 * ns), MPI_INT64_T, p, TAG_SEGS,
			  f->comm, &in->req[in->nreq++]);
		if (data)
			MPI_Isend(buf + rd->data_off[a], (int)nb, MPI_BYTE, p, TAG_DATA, f->comm,
				  &in->req[in->nreq++]);
	}
}

/* The aggregator's part of a write round: the window assembled, its covered
 * runs written in file order. */
static int window_write(struct cio_file *f, const struct round *rd, struct inbox *in,
			char *win)
{
	int64_t bo = 0;
	size_t n = 0;
	int ret = 0;

	for (int64_t s = 0; s < in->nsegs; s++) {
		memcpy(win + (in->segs[s].off - rd->wstart), in->data + bo, in->segs[s].len);
		bo += in->segs[s].len;
	}
	qsort(in->segs, in->nsegs, sizeof(*in->segs), seg_cmp);
	for (int64_t s = 0; s < in->nsegs; s++) {
		struct cio_seg *run = &in->segs[n];

		if (n && in->segs[s].off <= run[-1].off + run[-1].len) {
			int64_t e = in->segs[s].off + in->segs[s].len;

			if (e > run[-1].off + run[-1].len)
				run[-1].len = e - run[-1].off;
			continue;
		}
		*run = in->segs[s];
		n++;
	}
	for (size_t s = 0; s < n && !ret; s++)
		ret = agg_write(f, win + (in->segs[s].off - rd->wstart), in->segs[s].len,
				in->segs[s].off);
	return ret;
}

/* post_write: every rank learns whether any failed (here or, before, in a
 * sync thread of this file or of a deferred close of the same ranks). */
static int agree(struct cio_file *f, int err)
{
	int any;
	double t0 = now();

	err = err ? err : f->pending_err;
	err = err ? err : cio_file_deferred_error(f->group);
	f->pending_err = 0;
	MPI_Allreduce(&err, &any, 1, MPI_INT, MPI_MIN, f->comm);
	f->t[CIO_T_POST_WRITE] += now() - t0;
	return any ? MPI_ERR_IO : MPI_SUCCESS;
}

/*
 * The start of round r: the counts exchanged (all2all), the inbox and, on an
 * aggregator, the window (allocated once).  0, or -ENOMEM: then the counts
 * are exchanged but this rank has nothing else to take part with.
 */
static int round_open(struct cio_file *f, const struct plan *pl, int64_t r, struct round *rd,
		      struct inbox *in, char **win)
{
	double t0 = now();
	int ret = round_make(f, pl, r, rd);

	f->t[CIO_T_ALL2ALL] += now() - t0;
	memset(in, 0, sizeof(*in));
	if (ret)
		return ret;
	ret = inbox_make(f, rd, in);
	if (!ret && rd->my_agg >= 0 && !*win)
		*win = malloc(pl->cb);
	return !ret && rd->my_agg >= 0 && !*win ? -ENOMEM : ret;
}

static void round_close(struct round *rd, struct inbox *in)
{
	inbox_free(in);
	round_free(rd);
}

/* A write round past its start: data to the aggregators, the window written
 * unless this rank already failed (*err). */
static void round_write(struct cio_file *f, const struct plan *pl, struct round *rd,
			struct inbox *in, char *buf, char *win, int *err)
{
	double t1 = now(), t2;

	post_recvs(f, rd, in, 1);
	post_sends(f, pl, rd, buf, in, 1);
	t2 = now();
	f->t[CIO_T_SHUFFLE] += t2 - t1;
	MPI_Waitall(in->nreq, in->req, MPI_STATUSES_IGNORE);
	t1 = now();
	f->t[CIO_T_WAITALL] += t1 - t2;
	if (rd->my_agg >= 0 && !*err)
		*err = window_write(f, rd, in, win);
	f->t[CIO_T_WRITE] += now() - t1;
}

static int pread_full(int fd, char *buf, int64_t len, int64_t off)
{
	while (len > 0) {
		ssize_t n = pread(fd, buf, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0) {
			memset(buf, 0, len);
			return 0;
		}
		buf += n;
		len -= n;
		off += n;
	}
	return 0;
}

/* The aggregator's part of a read round: the span its requests cover read
 * at once, each source's pieces packed in its order and sent back. */
static int window_read(struct cio_file *f, const struct round *rd, struct inbox *in,
		       char *win, char *out, MPI_Request *req, int *nreq)
{
	int64_t lo = INT64_MAX, hi = 0, so = 0, bo = 0;
	int ret;

	for (int64_t s = 0; s < in->nsegs; s++) {
		if (in->segs[s].off < lo)
			lo = in->segs[s].off;
		if (in->segs[s].off + in->segs[s].len > hi)
			hi = in->segs[s].off + in->segs[s].len;
	}
	if (!in->nsegs)
		return 0;
	/* a failed read still answers every source (with zeros) */
	ret = pread_full(f->gfd, win + (lo - rd->wstart), hi - lo, lo);
	if (ret)
		memset(win + (lo - rd->wstart), 0, hi - lo);
	for (int p = 0; p < f->nprocs; p++) {
		int64_t ns = rd->rcnt[2 * p], nb = rd->rcnt[2 * p + 1], b0 = bo;

		for (int64_t s = so; s < so + ns; s++) {
			memcpy(out + bo, win + (in->segs[s].off - rd->wstart), in->segs[s].len);
			bo += in->segs[s].len;
		}
		if (ns)
			MPI_Isend(out + b0, (int)nb, MPI_BYTE, p, TAG_DATA, f->comm, &req[(*nreq)++]);
		so += ns;
	}
	return ret;
}

/* A read round past its start: segment lists to the aggregators, the data
 * back into the requests the lists used. */
static void round_read(struct cio_file *f, const struct plan *pl, struct round *rd,
		       struct inbox *in, char *buf, char *win, int *err)
{
	double t1 = now();

	post_recvs(f, rd, in, 0);
	post_sends(f, pl, rd, buf, in, 0);
	MPI_Waitall(in->nreq, in->req, MPI_STATUSES_IGNORE);
	f->t[CIO_T_SHUFFLE] += now() - t1;
	in->nreq = 0;
	for (int a = 0; a < pl->dom.nagg; a++) {
		int p = pl->dom.agg_rank[a];

		if (rd->cnt[2 * p])
			MPI_Irecv(buf + rd->data_off[a], (int)rd->cnt[2 * p + 1], MPI_BYTE, p,
				  TAG_DATA, f->comm, &in->req[in->nreq++]);
	}
	if (rd->my_agg >= 0) {
		int rerr = window_read(f, rd, in, win, in->data, in->req, &in->nreq);

		*err = *err ? *err : rerr;
	}
	t1 = now();
	MPI_Waitall(in->nreq, in->req, MPI_STATUSES_IGNORE);
	f->t[CIO_T_WAITALL] += now() - t1;
}

/* A rank alone (a file per process): nothing to exchange, the access
 * written or read in place, segment after segment in file order. */
static int direct(struct cio_file *f, const struct cio_flat *acc, char *buf, int write)
{
	double t0 = now();
	int64_t pos = 0;
	int ret = 0;

	for (size_t i = 0; i < acc->n && !ret; i++) {
		const struct cio_seg *s = &acc->seg[i];

		ret = write ? agg_write(f, buf + pos, s->len, s->off) :
			pread_full(f->gfd, buf + pos, s->len, s->off);
		pos += s->len;
	}
	f->t[CIO_T_WRITE] += now() - t0;
	return ret;
}

/* Every rank takes part in every round, even after its own failure, so that
 * the others' messages are matched; a failed aggregator writes no more. */
static int twophase(struct cio_file *f, const struct cio_flat *acc, char *buf, int write)
{
	struct plan pl;
	char *win = NULL;
	int err;

	if (f->nprocs == 1) {
		err = direct(f, acc, buf, write);
		if (err)
			cio_warn("%s of %s: %s", write ? "write" : "read", f->path, strerror(-err));
		return agree(f, err);
	}
	err = plan_make(f, acc, &pl);
	if (err)
		return agree(f, err);
	for (int64_t r = 0; r < pl.dom.rounds; r++) {
		struct round rd;
		struct inbox in;
		int mem = round_open(f, &pl, r, &rd, &in, &win);

		err = err ? err : mem;
		if (!mem)
			(write ? round_write : round_read)(f, &pl, &rd, &in, buf, win, &err);
		round_close(&rd, &in);
	}
	free(win);
	plan_free(&pl);
	if (err)
		cio_warn("collective %s of %s: %s", write ? "write" : "read", f->path,
			 strerror(-err));
	return agree(f, err);
}

int cio_twophase_write(struct cio_file *f, const struct cio_flat *acc, const char *buf)
{
	/* a write only reads buf */
	return twophase(f, acc, (char *)buf, 1);
}

int cio_twophase_read(struct cio_file *f, const struct cio_flat *acc, char *buf)
{
	return twophase(f, acc, buf, 0);
}

/* SPDX-License-Identifier: MIT */
/* PRTT protocol and reduction to LogGP parameters; see calib_bench.h. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "calib_bench.h"
#include "calib_clock.h"
#include "calib_err.h"
#include "calib_stats.h"

#define CALIB_SETTLE_NS 500000000ULL

/* Point description the client sends; n == 0 ends the session. */
struct calib_point {
	uint32_t n;		/* messages per sample */
	uint32_t warmup;	/* unrecorded samples first */
	uint32_t samples;	/* recorded samples after the warm-up */
	uint32_t record;	/* server returns its o_r samples */
	uint64_t size;
	uint64_t spin_send_ns;	/* the control's spins (calib_opts.h) */
	uint64_t spin_recv_ns;
};

/* Samples of one point, warm-up excluded, in nanoseconds. */
struct calib_samples {
	double *prtt;
	double *o_s;		/* only for recorded points */
	double *o_r;
	size_t n;
};

/* Spins ns (0: returns at once); returns the time it took. */
static uint64_t calib_spin(uint64_t ns)
{
	uint64_t start, now;

	if (!ns)
		return 0;
	start = calib_now_ns();
	while ((now = calib_now_ns()) - start < ns)
		;
	return now - start;
}

static int calib_point_start(struct calib_oob *o, const struct calib_point *p)
{
	int ret = calib_oob_send(o, p, sizeof(*p));

	return ret ? ret : calib_oob_barrier(o);
}

/*
 * Runs one point as described by p; s gets its recorded samples.  The
 * control's spins, when p has them, sit where the shim's delays do: before
 * each send and after the read that returns the reply.
 */
static int calib_client_run(struct calib_fabric *f, struct calib_oob *o,
			    const struct calib_point *pp,
			    struct calib_samples *s)
{
	struct calib_point p = *pp;
	uint64_t *remote = NULL, t0, call = 0, spun;
	size_t i, k, got;
	uint32_t n = p.n;
	int ret;

	s->n = p.samples;
	s->prtt = calloc(s->n, sizeof(double));
	s->o_s = calloc(s->n, sizeof(double));
	s->o_r = calloc(s->n, sizeof(double));
	remote = calloc(s->n, sizeof(*remote));
	if (!s->prtt || !s->o_s || !s->o_r || !remote) {
		ret = -ENOMEM;
		calib_err("out of memory for %zu samples", s->n);
		goto out;
	}
	ret = calib_point_start(o, &p);
	if (ret)
		goto out;
	for (k = 0; k < p.warmup + p.samples; k++) {
		t0 = calib_now_ns();
		for (i = 0; i < n; i++) {
			spun = calib_spin(p.spin_send_ns);
			ret = calib_fabric_send(f, p.size, i ? NULL : &call);
			if (ret)
				goto out;
			if (!i)
				call += spun;
		}
		ret = calib_fabric_wait_recv(f, NULL);
		if (ret)
			goto out;
		calib_spin(p.spin_recv_ns);
		if (k >= p.warmup) {
			s->prtt[k - p.warmup] = (double)(calib_now_ns() - t0);
			s->o_s[k - p.warmup] = (double)call;
		}
		ret = calib_fabric_post_recvs(f, 1);
		if (ret)
			goto out;
	}
	if (p.record) {
		ret = calib_oob_recv_blob(o, remote, s->n * sizeof(*remote), &got);
		if (ret)
			goto out;
		for (i = 0; i < s->n; i++)
			s->o_r[i] = (double)remote[i];
	}
out:
	free(remote);
	return ret;
}

static int calib_client_point(struct calib_fabric *f, struct calib_oob *o,
			      const struct calib_opts *opts, uint32_t n,
			      size_t size, int record, struct calib_samples *s)
{
	struct calib_point p = { .n = n, .size = size, .record = record,
				 .warmup = opts->warmup,
				 .samples = opts->iterations };

	/* The control is for the round trip (o_s, o_r, L); g and G run bare. */
	if (record) {
		p.spin_send_ns = opts->spin_send_ns;
		p.spin_recv_ns = opts->spin_recv_ns;
	}

	return calib_client_run(f, o, &p, s);
}

static void calib_samples_free(struct calib_samples *s)
{
	free(s->prtt);
	free(s->o_s);
	free(s->o_r);
}

/*
 * Ping-pongs for at least CALIB_SETTLE_NS before the first point: two
 * busy-polling processes started together often share a core until the
 * scheduler spreads them, and every round trip then costs two yields.
 */
static int calib_client_settle(struct calib_fabric *f, struct calib_oob *o,
			       const struct calib_opts *opts)
{
	struct calib_point p = { .n = 1, .size = opts->sizes[0],
				 .warmup = 100, .samples = 1 };
	struct calib_samples s = { 0 };
	uint64_t start = calib_now_ns();
	int ret;

	do {
		ret = calib_client_run(f, o, &p, &s);
		calib_samples_free(&s);
	} while (!ret && calib_now_ns() - start < CALIB_SETTLE_NS);
	return ret;
}

static int calib_stat_of(const double *v, size_t n, double scale,
			 struct calib_stat *st)
{
	static const double p[] = { 10.0, 50.0, 99.0 };
	double q[3] = { 0 };
	int ret = calib_percentiles(v, n, p, q, 3);

	st->p10 = q[0] * scale;
	st->median = q[1] * scale;
	st->p99 = q[2] * scale;
	return ret;
}

/*
 * Per-sample gaps (PRTT(n,0,s) - median PRTT(1,0,s)) / (n - 1) into the
 * burst's prtt array, in nanoseconds.
 */
static void calib_gaps(struct calib_samples *burst, double base, uint32_t n)
{
	size_t i;

	for (i = 0; i < burst->n; i++)
		burst->prtt[i] = (burst->prtt[i] - base) / (double)(n - 1);
}

static int calib_client_sizes(struct calib_fabric *f, struct calib_oob *o,
			      const struct calib_opts *opts,
			      struct calib_samples *first,
			      struct calib_results *r)
{
	struct calib_samples one = { 0 }, burst = { 0 };
	double base, x[CALIB_MAX_SIZES], b;
	unsigned j;
	int ret = 0;

	for (j = 0; j < opts->nsizes && !ret; j++) {
		if (j || opts->spin_send_ns || opts->spin_recv_ns) {
			ret = calib_client_point(f, o, opts, 1, opts->sizes[j],
						 0, &one);
			if (!ret)
				ret = calib_percentile(one.prtt, one.n, 50, &base);
			calib_samples_free(&one);
		} else {
			ret = calib_percentile(first->prtt, first->n, 50, &base);
		}
		if (!ret)
			ret = calib_client_point(f, o, opts, opts->burst,
						 opts->sizes[j], 0, &burst);
		if (!ret) {
			r->half_rtt_size[j] = base / 2000.0;
			calib_gaps(&burst, base, opts->burst);
			ret = calib_percentile(burst.prtt, burst.n, 50, &r->gap[j]);
		}
		if (!ret && !j)
			ret = calib_stat_of(burst.prtt, burst.n, 1e-3, &r->g);
		calib_samples_free(&burst);
		x[j] = (double)opts->sizes[j];
	}
	if (ret)
		return ret;
	r->G = NAN;
	r->G_r2 = NAN;
	/* Gaps are in ns here, so the slope comes out in ns per byte. */
	if (opts->nsizes >= 2 &&
	    calib_linfit(x, r->gap, opts->nsizes, &r->G, &b, &r->G_r2)) {
		r->G = NAN;
		r->G_r2 = NAN;
	}
	for (j = 0; j < opts->nsizes; j++)
		r->gap[j] /= 1000.0;
	return 0;
}

int calib_bench_client(struct calib_fabric *f, struct calib_oob *o,
		       const struct calib_opts *opts, struct calib_results *r)
{
	struct calib_point end = { 0 };
	struct calib_samples first = { 0 };
	double o_s, o_r;
	size_t i;
	int ret;

	ret = calib_fabric_post_recvs(f, f->nrecv);
	if (ret)
		return ret;
	ret = calib_client_settle(f, o, opts);
	if (!ret)
		ret = calib_client_point(f, o, opts, 1, opts->sizes[0], 1,
					 &first);
	if (ret)
		goto out;

	ret = calib_stat_of(first.o_s, first.n, 1e-3, &r->o_s);
	if (!ret)
		ret = calib_stat_of(first.o_r, first.n, 1e-3, &r->o_r);
	if (ret)
		goto out;
	/* LogGP: RTT = 2 (o_s + L + o_r), so L = PRTT/2 - o_s - o_r. */
	o_s = r->o_s.median * 1e3;
	o_r = r->o_r.median * 1e3;
	for (i = 0; i < first.n; i++)
		first.o_s[i] = first.prtt[i] / 2.0 - o_s - o_r;
	ret = calib_stat_of(first.o_s, first.n, 1e-3, &r->L);
	if (!ret) {
		for (i = 0; i < first.n; i++)
			first.o_r[i] = first.prtt[i] / 2.0;
		ret = calib_stat_of(first.o_r, first.n, 1e-3, &r->half_rtt);
	}
	if (!ret)
		ret = calib_client_sizes(f, o, opts, &first, r);
	if (!ret)
		ret = calib_oob_send(o, &end, sizeof(end));
	if (!ret)
		ret = calib_fabric_drain(f);
	if (!ret)
		ret = calib_oob_barrier(o);
out:
	calib_samples_free(&first);
	return ret;
}

static int calib_server_point(struct calib_fabric *f, struct calib_oob *o,
			      const struct calib_point *p)
{
	uint64_t *o_r = NULL, ns = 0;
	uint32_t k, i;
	int ret;

	if (p->spin_send_ns > CALIB_MAX_SPIN_NS ||
	    p->spin_recv_ns > CALIB_MAX_SPIN_NS) {
		calib_err("client asked for control spins of %llu and %llu ns; at most %lu",
			  (unsigned long long)p->spin_send_ns,
			  (unsigned long long)p->spin_recv_ns, CALIB_MAX_SPIN_NS);
		return -EPROTO;
	}
	if (p->n > f->nrecv / 2 || p->size > f->slot) {
		calib_err("client asked for %u messages of %llu bytes; buffers hold %u of %zu",
			  p->n, (unsigned long long)p->size, f->nrecv / 2,
			  f->slot);
		return -EPROTO;
	}
	o_r = calloc(p->warmup + p->samples, sizeof(*o_r));
	if (!o_r)
		return -ENOMEM;
	ret = calib_oob_barrier(o);
	for (k = 0; k < p->warmup + p->samples && !ret; k++) {
		for (i = 0; i < p->n && !ret; i++)
			ret = calib_fabric_wait_recv(f, &ns);
		if (ret)
			break;
		o_r[k] = ns + calib_spin(p->spin_recv_ns);
		calib_spin(p->spin_send_ns);
		ret = calib_fabric_send(f, 0, NULL);
		/* Re-arm after the reply, off the measured path. */
		if (!ret)
			ret = calib_fabric_post_recvs(f, p->n);
	}
	if (!ret && p->record)
		ret = calib_oob_send_blob(o, o_r + p->warmup,
					  p->samples * sizeof(*o_r));
	free(o_r);
	return ret;
}

int calib_bench_server(struct calib_fabric *f, struct calib_oob *o)
{
	struct calib_point p;
	int ret;

	ret = calib_fabric_post_recvs(f, f->nrecv);
	while (!ret) {
		ret = calib_oob_recv(o, &p, sizeof(p));
		if (ret || !p.n)
			break;
		ret = calib_server_point(f, o, &p);
	}
	if (!ret)
		ret = calib_fabric_drain(f);
	return ret ? ret : calib_oob_barrier(o);
}

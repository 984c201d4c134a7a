/* SPDX-License-Identifier: MIT */
/*
 * bh_check.c: is the n-body result right?
 *
 * Sanity (always): total energy and momentum after the timed steps against
 * their values at the start.  Direct (-v direct, or auto where rank 0 can
 * afford it): rank 0 gathers every body and compares
 *   - the forces of the last step with a direct O(n^2) sum at the same
 *     positions: max over bodies of |a - a_direct| / sum_j |a_ij|, the
 *     error measured against the body's own force scale (net forces can
 *     cancel to nothing; the sum of their magnitudes cannot);
 *   - the final positions with a serial leapfrog of direct forces from the
 *     same initial state: rms |x - x_direct| / rms |x_direct - x_0|.
 *
 * Bounds.  A cell accepted as a monopole (side s < theta d) errs by its
 * quadrupole, relative to its pull ~ (s / d)^2 < theta^2, so the force
 * bound is BH_TOL_FORCE theta^2; the positions, energy and momentum inherit
 * errors of the same order from the forces.  theta = 0 is the direct sum,
 * left with rounding in a different order (BH_TOL_ROUND), plus the
 * leapfrog's own energy error (BH_TOL_DT, a few steps of dt = 0.025).  The
 * constants are several times the largest errors measured over seeds,
 * sizes, distributions and rank counts (README.md); a damaged cell or body
 * (-X adds a mass of 10^4 to one of 1/N) is orders of magnitude beyond.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bh_check.h"

#define BH_DIRECT_PAIRS	(1LL << 27)	/* pair forces auto allows rank 0 */
#define BH_TOL_ROUND	1e-9
#define BH_TOL_DT	1e-3
#define BH_TOL_FORCE	1.0
#define BH_TOL_RMS	0.3
#define BH_TOL_POS	0.3
#define BH_TOL_ENERGY	0.01
#define BH_TOL_MOM	0.03
#define BH_ROW		7		/* id, pos[3], acc[3] */

bool bh_check_direct_ok(int64_t total, int64_t steps)
{
	return steps <= BH_DIRECT_STEPS &&
	       (double)(steps + 2) * (double)total * (double)total <= (double)BH_DIRECT_PAIRS;
}

void bh_state_reduce(const struct bh_body *b, int64_t n, double kick,
		     struct bh_state *s)
{
	double loc[6] = { 0, 0, 0, 0, 0, kick }, all[6];
	int64_t i;
	int d;

	for (i = 0; i < n; i++) {
		double v2 = 0;

		for (d = 0; d < 3; d++) {
			v2 += b[i].vel[d] * b[i].vel[d];
			loc[2 + d] += b[i].mass * b[i].vel[d];
		}
		loc[0] += b[i].mass * v2 / 2;
		loc[1] += b[i].mass * b[i].phi / 2;
	}
	MPI_Allreduce(loc, all, 6, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	s->kin = all[0];
	s->pot = all[1];
	memcpy(s->mom, all + 2, sizeof(s->mom));
	s->kick = all[5];
}

/* Serial leapfrog of direct forces from the initial state: final positions. */
static void bh_serial(enum bh_dist dist, uint64_t seed, int64_t total, int64_t steps,
		      double (*x0)[3], double (*x)[3], double (*v)[3], double (*a)[3])
{
	double mass = 1.0 / (double)total;
	int64_t s, i;
	int d;

	bh_body_all(dist, seed, total, x0, v);
	memcpy(x, x0, sizeof(*x) * (size_t)total);
	bh_direct((const double (*)[3])x, total, mass, a, NULL);
	for (s = 0; s < steps; s++) {
		for (i = 0; i < total; i++)
			for (d = 0; d < 3; d++) {
				v[i][d] += a[i][d] * BH_DT / 2;
				x[i][d] += v[i][d] * BH_DT;
			}
		bh_direct((const double (*)[3])x, total, mass, a, NULL);
		for (i = 0; i < total; i++)
			for (d = 0; d < 3; d++)
				v[i][d] += a[i][d] * BH_DT / 2;
	}
}

/* Rank 0: force and position errors of the gathered rows. */
static int bh_direct_errs(enum bh_dist dist, uint64_t seed, int64_t total, int64_t steps,
			  const double *rows, struct bh_verdict *vd)
{
	double (*xs)[3], (*as)[3], (*x0)[3], (*xd)[3], (*vel)[3], (*ad)[3], *asum;
	double num = 0, den = 0, fnum = 0, fden = 0;
	int64_t i, g;
	int d, ret = -ENOMEM;

	xs = malloc(sizeof(*xs) * (size_t)total);
	as = malloc(sizeof(*as) * (size_t)total);
	x0 = malloc(sizeof(*x0) * (size_t)total);
	xd = malloc(sizeof(*xd) * (size_t)total);
	vel = malloc(sizeof(*vel) * (size_t)total);
	ad = malloc(sizeof(*ad) * (size_t)total);
	asum = malloc(sizeof(*asum) * (size_t)total);
	if (!xs || !as || !x0 || !xd || !vel || !ad || !asum)
		goto out;
	for (i = 0; i < total; i++) {
		const double *row = rows + BH_ROW * i;

		g = (int64_t)row[0];
		memcpy(xs[g], row + 1, sizeof(xs[g]));
		memcpy(as[g], row + 4, sizeof(as[g]));
	}
	/* forces of the last step, at the positions they were computed at */
	bh_direct((const double (*)[3])xs, total, 1.0 / (double)total, ad, asum);
	vd->force_err = 0;
	for (i = 0; i < total; i++) {
		double e2 = 0, e;

		for (d = 0; d < 3; d++) {
			e2 += (as[i][d] - ad[i][d]) * (as[i][d] - ad[i][d]);
			fden += ad[i][d] * ad[i][d];
		}
		fnum += e2;
		e = sqrt(e2) / (asum[i] > 0 ? asum[i] : 1);
		if (!(e <= vd->force_err))	/* NaN counts as the worst */
			vd->force_err = isnan(e) ? INFINITY : e;
	}
	vd->force_rms = sqrt(fnum / (fden > 0 ? fden : 1));
	if (isnan(vd->force_rms))
		vd->force_rms = INFINITY;
	bh_serial(dist, seed, total, steps, x0, xd, vel, ad);
	for (i = 0; i < total; i++)
		for (d = 0; d < 3; d++) {
			num += (xs[i][d] - xd[i][d]) * (xs[i][d] - xd[i][d]);
			den += (xd[i][d] - x0[i][d]) * (xd[i][d] - x0[i][d]);
		}
	vd->pos_err = sqrt(num / (den > 0 ? den : 1));
	if (isnan(vd->pos_err))
		vd->pos_err = INFINITY;
	ret = 0;
out:
	free(xs);
	free(as);
	free(x0);
	free(xd);
	free(vel);
	free(ad);
	free(asum);
	return ret;
}

/* Gathers every body's id, position and force at rank 0 and checks them. */
static int bh_check_direct(const struct wl_prog *p, enum bh_dist dist, uint64_t seed,
			   int64_t total, int64_t steps, const struct bh_body *b, int64_t n,
			   struct bh_verdict *vd)
{
	double *mine = NULL, *all = NULL;
	int *counts = NULL, *displs = NULL, cnt = (int)(BH_ROW * n), i, ret = 0, ok = 1;
	int64_t k;

	mine = malloc(sizeof(*mine) * (size_t)(cnt ? cnt : 1));
	if (!p->rank) {
		counts = malloc(sizeof(*counts) * (size_t)p->nranks);
		displs = malloc(sizeof(*displs) * (size_t)p->nranks);
		all = malloc(sizeof(*all) * BH_ROW * (size_t)total);
		ok = counts && displs && all;
	}
	ok = ok && mine;
	MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	if (!ok) {
		ret = -ENOMEM;
		goto out;
	}
	for (k = 0; k < n; k++) {
		double *row = mine + BH_ROW * k;

		row[0] = (double)b[k].id;
		memcpy(row + 1, b[k].pos, sizeof(b[k].pos));
		memcpy(row + 4, b[k].acc, sizeof(b[k].acc));
	}
	MPI_Gather(&cnt, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (!p->rank)
		for (i = 0; i < p->nranks; i++)
			displs[i] = i ? displs[i - 1] + counts[i - 1] : 0;
	MPI_Gatherv(mine, cnt, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	if (!p->rank)
		ret = bh_direct_errs(dist, seed, total, steps, all, vd);
out:
	free(mine);
	free(all);
	free(counts);
	free(displs);
	MPI_Bcast(&ret, 1, MPI_INT, 0, MPI_COMM_WORLD);
	return ret;
}

int bh_check(const struct wl_prog *p, enum bh_check check, enum bh_dist dist,
	     uint64_t seed, int64_t total, int64_t steps, double theta,
	     const struct bh_body *b, int64_t n, const struct bh_state *s0,
	     const struct bh_state *s1, struct bh_verdict *vd)
{
	double e0 = s0->kin + s0->pot, e1 = s1->kin + s1->pot, dp = 0;
	double t2 = theta * theta;
	double tol_e = BH_TOL_DT + BH_TOL_ENERGY * t2;
	double tol_p = BH_TOL_ROUND + BH_TOL_MOM * t2;
	double tol_f = BH_TOL_ROUND + BH_TOL_FORCE * t2;
	double tol_r = BH_TOL_ROUND + BH_TOL_RMS * t2;
	double tol_x = BH_TOL_ROUND + BH_TOL_POS * t2;
	int d, ret;

	memset(vd, 0, sizeof(*vd));
	for (d = 0; d < 3; d++)
		dp += (s1->mom[d] - s0->mom[d]) * (s1->mom[d] - s0->mom[d]);
	vd->energy_err = fabs(e1 - e0) / (fabs(e0) > 0 ? fabs(e0) : 1);
	vd->momentum_err = sqrt(dp) / (s1->kick > 0 ? s1->kick : 1);
	if (!isfinite(vd->energy_err))
		vd->energy_err = INFINITY;
	if (!isfinite(vd->momentum_err))
		vd->momentum_err = INFINITY;
	vd->ok = vd->energy_err <= tol_e && vd->momentum_err <= tol_p;
	if (!vd->ok && !p->rank)
		fprintf(stderr, "barnes: energy error %.3g (bound %.3g) or momentum error %.3g (bound %.3g) too large for theta %g: E %.10g -> %.10g\n",
			vd->energy_err, tol_e, vd->momentum_err, tol_p, theta, e0, e1);
	if (check != BH_CHECK_DIRECT)
		return 0;
	ret = bh_check_direct(p, dist, seed, total, steps, b, n, vd);
	if (ret)
		return ret;
	MPI_Bcast(&vd->force_err, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	MPI_Bcast(&vd->force_rms, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	MPI_Bcast(&vd->pos_err, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	if (vd->force_err > tol_f || vd->force_rms > tol_r || vd->pos_err > tol_x) {
		vd->ok = false;
		if (!p->rank)
			fprintf(stderr, "barnes: against the direct sum for theta %g: force error %.3g (bound %.3g), rms %.3g (bound %.3g); position error %.3g (bound %.3g)\n",
				theta, vd->force_err, tol_f, vd->force_rms, tol_r,
				vd->pos_err, tol_x);
	}
	return 0;
}

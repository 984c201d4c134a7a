/* SPDX-License-Identifier: MIT */
/*
 * bh_check.h: barnes's validation (bh_check.c).
 */
#ifndef BH_CHECK_H
#define BH_CHECK_H

#include "bh.h"

#define BH_DIRECT_BODIES_MAX	(1LL << 16)
#define BH_DIRECT_STEPS		16	/* beyond, trajectories part by chaos */

enum bh_check {
	BH_CHECK_AUTO,
	BH_CHECK_DIRECT,
	BH_CHECK_SANITY,
};

/* Global sums at one instant (bh_state_reduce). */
struct bh_state {
	double kin, pot;	/* energy: sum m v^2 / 2 and sum m phi / 2 */
	double mom[3];		/* sum m v */
	double kick;		/* sum over kicks of sum m |a| dt / 2 */
};

struct bh_verdict {
	bool ok;
	double energy_err;	/* |E1 - E0| / |E0| */
	double momentum_err;	/* |P1 - P0| / kick */
	double force_err;	/* max_i |a_i - a_direct,i| / sum_j |a_ij| */
	double force_rms;	/* rms |a - a_direct| / rms |a_direct| */
	double pos_err;		/* rms |x - x_direct| / rms |x_direct - x_0| */
};

bool bh_check_direct_ok(int64_t total, int64_t steps);
void bh_state_reduce(const struct bh_body *b, int64_t n, double kick,
		     struct bh_state *s);
int bh_check(const struct wl_prog *p, enum bh_check check, enum bh_dist dist,
	     uint64_t seed, int64_t total, int64_t steps, double theta,
	     const struct bh_body *b, int64_t n, const struct bh_state *s0,
	     const struct bh_state *s1, struct bh_verdict *vd);

#endif /* BH_CHECK_H */

/* SPDX-License-Identifier: MIT */
/*
 * bh_body.c: initial conditions, the spatial partition and the forces of
 * the direct reference.
 *
 * Body g's initial state is a pure function of (distribution, seed, g), so
 * every rank, and rank 0's serial reference, can make any body without a
 * message.  The centre of mass and its velocity are removed (means over all
 * bodies, summed in index order, so every rank gets the same bits).
 *
 * The partition is spatial, as the Split-C Barnes's is (it used cost
 * zones): every rank makes all bodies' Morton keys, sorts them and takes
 * its contiguous share, so a rank's tree covers a compact region and most
 * remote reads are the upper cells of the other trees.  That costs every
 * rank O(N log N) time and 16 bytes per body once, before the timed steps.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bh.h"
#include "wl_hash.h"

struct bh_key {
	uint64_t key;
	int64_t g;
};

/* Uniform in [0, 1): draw k of body g (a counter-based generator). */
static double bh_rand(uint64_t seed, int64_t g, uint64_t k)
{
	uint64_t x = seed * WL_GOLDEN ^ ((uint64_t)g << 8) ^ k;

	x = wl_mix64(x + 0x632be59bd9b4e019ULL);
	return wl_unit(wl_mix64(x + (uint64_t)g * 0xd1b54a32d192ed03ULL));
}

/* A vector of length len in a uniformly random direction. */
static void bh_sphere(uint64_t seed, int64_t g, uint64_t k, double len, double v[3])
{
	double z = 1 - 2 * bh_rand(seed, g, k);
	double a = 2 * M_PI * bh_rand(seed, g, k + 1);
	double s = sqrt(fmax(0, 1 - z * z));

	v[0] = len * s * cos(a);
	v[1] = len * s * sin(a);
	v[2] = len * z;
}

/*
 * Plummer sphere by Aarseth, Henon and Wielen (1974), in N-body units
 * (G = M = 1, E = -1/4): radius from the cumulative mass (truncated at 99.9 %
 * of it, ~22 scale radii), speed by von Neumann rejection.  Uniform: a cube
 * [-1, 1]^3 at rest (a cold collapse).
 */
void bh_body_init(enum bh_dist dist, uint64_t seed, int64_t g, double pos[3],
		  double vel[3])
{
	const double rs = 3 * M_PI / 16, vs = sqrt(16 / (3 * M_PI));
	double x, r, q = 0, ve;
	uint64_t k;
	int i;

	if (dist == BH_DIST_UNIFORM) {
		for (i = 0; i < 3; i++) {
			pos[i] = 2 * bh_rand(seed, g, (uint64_t)i) - 1;
			vel[i] = 0;
		}
		return;
	}
	x = 1e-10 + bh_rand(seed, g, 0) * (0.999 - 1e-10);
	r = 1 / sqrt(pow(x, -2.0 / 3) - 1);
	bh_sphere(seed, g, 1, r * rs, pos);
	for (k = 3; k < 1000; k += 2) {
		double x4 = bh_rand(seed, g, k), x5 = bh_rand(seed, g, k + 1);

		q = x4;
		if (0.1 * x5 < x4 * x4 * pow(1 - x4 * x4, 3.5))
			break;
	}
	ve = sqrt(2.0) * pow(1 + r * r, -0.25);
	bh_sphere(seed, g, 1001, q * ve * vs, vel);
}

/* Means of position and velocity, and the bounding box, of all bodies. */
static void bh_body_scan(enum bh_dist dist, uint64_t seed, int64_t total,
			 double pm[3], double vm[3], double lo[3], double hi[3])
{
	double pos[3], vel[3];
	int64_t g;
	int i;

	for (i = 0; i < 3; i++) {
		pm[i] = vm[i] = 0;
		lo[i] = INFINITY;
		hi[i] = -INFINITY;
	}
	for (g = 0; g < total; g++) {
		bh_body_init(dist, seed, g, pos, vel);
		for (i = 0; i < 3; i++) {
			pm[i] += pos[i];
			vm[i] += vel[i];
			lo[i] = fmin(lo[i], pos[i]);
			hi[i] = fmax(hi[i], pos[i]);
		}
	}
	for (i = 0; i < 3; i++) {
		pm[i] /= (double)total;
		vm[i] /= (double)total;
	}
}

/* 21 bits of each coordinate, interleaved. */
static uint64_t bh_morton(const double pos[3], const double lo[3], double scale)
{
	uint64_t key = 0, c[3];
	int i, bit;

	for (i = 0; i < 3; i++) {
		double u = (pos[i] - lo[i]) * scale;

		c[i] = u <= 0 ? 0 : u >= 2097151 ? 2097151 : (uint64_t)u;
	}
	for (bit = 20; bit >= 0; bit--)
		for (i = 0; i < 3; i++)
			key = key << 1 | ((c[i] >> bit) & 1);
	return key;
}

static int bh_key_cmp(const void *a, const void *b)
{
	const struct bh_key *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->g > y->g) - (x->g < y->g);
}

/*
 * The n bodies of this rank: positions [lo, lo + n) of the Morton order of
 * all total bodies, with the centre of mass at rest at the origin.
 */
int bh_body_setup(enum bh_dist dist, uint64_t seed, int64_t total, int64_t lo,
		  int64_t n, struct bh_body *b)
{
	double pm[3], vm[3], bl[3], bu[3], pos[3], vel[3], side = 0, scale;
	struct bh_key *keys;
	int64_t g, i;
	int d;

	keys = malloc(sizeof(*keys) * (size_t)total);
	if (!keys)
		return -ENOMEM;
	bh_body_scan(dist, seed, total, pm, vm, bl, bu);
	for (d = 0; d < 3; d++)
		side = fmax(side, bu[d] - bl[d]);
	scale = side > 0 ? 2097151 / side : 0;
	for (g = 0; g < total; g++) {
		bh_body_init(dist, seed, g, pos, vel);
		keys[g] = (struct bh_key){ bh_morton(pos, bl, scale), g };
	}
	qsort(keys, (size_t)total, sizeof(*keys), bh_key_cmp);
	for (i = 0; i < n; i++) {
		struct bh_body *x = &b[i];

		memset(x, 0, sizeof(*x));
		x->id = keys[lo + i].g;
		x->mass = 1.0 / (double)total;
		bh_body_init(dist, seed, x->id, x->pos, x->vel);
		for (d = 0; d < 3; d++) {
			x->pos[d] -= pm[d];
			x->vel[d] -= vm[d];
		}
	}
	free(keys);
	return 0;
}

/* Every body's initial state, as the ranks make it: the serial reference. */
void bh_body_all(enum bh_dist dist, uint64_t seed, int64_t total,
		 double (*pos)[3], double (*vel)[3])
{
	double pm[3], vm[3], bl[3], bu[3];
	int64_t g;
	int d;

	bh_body_scan(dist, seed, total, pm, vm, bl, bu);
	for (g = 0; g < total; g++) {
		bh_body_init(dist, seed, g, pos[g], vel[g]);
		for (d = 0; d < 3; d++) {
			pos[g][d] -= pm[d];
			vel[g][d] -= vm[d];
		}
	}
}

/* Softened attraction of a mass m at q on a body at p. */
void bh_pair(const double p[3], const double q[3], double m, double acc[3],
	     double *phi)
{
	double dx = q[0] - p[0], dy = q[1] - p[1], dz = q[2] - p[2];
	double r2 = dx * dx + dy * dy + dz * dz + BH_EPS * BH_EPS;
	double inv = 1 / sqrt(r2), f = m * inv * inv * inv;

	acc[0] += f * dx;
	acc[1] += f * dy;
	acc[2] += f * dz;
	*phi -= m * inv;
}

/*
 * Direct sum over all pairs: acc[i], and asum[i] = sum_j |a_ij|, the scale
 * against which a body's force error is measured (the net force can cancel
 * to near zero; the sum of magnitudes cannot).  asum may be NULL.
 */
void bh_direct(const double (*pos)[3], int64_t n, double mass, double (*acc)[3],
	       double *asum)
{
	int64_t i, j;

	for (i = 0; i < n; i++) {
		double a[3] = { 0, 0, 0 }, s = 0;

		for (j = 0; j < n; j++) {
			double dx, dy, dz, r2, inv, f;

			if (j == i)
				continue;
			dx = pos[j][0] - pos[i][0];
			dy = pos[j][1] - pos[i][1];
			dz = pos[j][2] - pos[i][2];
			r2 = dx * dx + dy * dy + dz * dz + BH_EPS * BH_EPS;
			inv = 1 / sqrt(r2);
			f = mass * inv * inv * inv;
			a[0] += f * dx;
			a[1] += f * dy;
			a[2] += f * dz;
			s += f * sqrt(dx * dx + dy * dy + dz * dz);
		}
		memcpy(acc[i], a, sizeof(a));
		if (asum)
			asum[i] = s;
	}
}

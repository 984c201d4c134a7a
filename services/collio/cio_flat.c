/*
 * cio_flat.c: a committed datatype's type map as byte segments, decoded with
 * MPI_Type_get_envelope/get_contents.  Subarrays and darrays are the
 * product of one ordered index set per dimension, walked in the array's
 * memory order (the order their type maps have).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cio.h"

void cio_flat_init(struct cio_flat *f)
{
	memset(f, 0, sizeof(*f));
}

void cio_flat_free(struct cio_flat *f)
{
	free(f->seg);
	cio_flat_init(f);
}

int cio_flat_append(struct cio_flat *f, int64_t off, int64_t len)
{
	if (len <= 0)
		return 0;
	f->size += len;
	if (f->n && f->seg[f->n - 1].off + f->seg[f->n - 1].len == off) {
		f->seg[f->n - 1].len += len;
		return 0;
	}
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 16;
		struct cio_seg *s = realloc(f->seg, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		f->seg = s;
		f->cap = cap;
	}
	f->seg[f->n].off = off;
	f->seg[f->n].len = len;
	f->n++;
	return 0;
}

/* Appends child's segments shifted by base. */
static int flat_put(struct cio_flat *out, const struct cio_flat *child, int64_t base)
{
	for (size_t i = 0; i < child->n; i++) {
		int ret = cio_flat_append(out, base + child->seg[i].off, child->seg[i].len);

		if (ret)
			return ret;
	}
	return 0;
}

/* count children side by side from base: one segment when the child is dense. */
static int flat_block(struct cio_flat *out, const struct cio_flat *child, int64_t ext,
		      int64_t base, int64_t count)
{
	int ret = 0;

	if (child->n == 1 && child->seg[0].off == 0 && child->seg[0].len == ext)
		return cio_flat_append(out, base, count * ext);
	for (int64_t j = 0; j < count && !ret; j++)
		ret = flat_put(out, child, base + j * ext);
	return ret;
}

/* One dimension of a subarray or darray: the runs of indices it keeps. */
struct dim_runs {
	struct cio_seg *run;	/* off = first index, len = count */
	size_t n;
};

static int runs_add(struct dim_runs *d, int64_t first, int64_t count, size_t cap)
{
	if (count <= 0)
		return 0;
	if (d->n == cap)
		return -EINVAL;
	d->run[d->n].off = first;
	d->run[d->n].len = count;
	d->n++;
	return 0;
}

/*
 * The product walk: dims[0] is the slowest, stride[k] the elements one step
 * of dims[k] skips.  The fastest dimension's runs put count elements of the
 * child each.
 */
static int product_walk(struct cio_flat *out, const struct cio_flat *child, int64_t ext,
			const struct dim_runs *dims, const int64_t *stride, int k, int ndims,
			int64_t elem)
{
	for (size_t r = 0; r < dims[k].n; r++) {
		for (int64_t i = 0; i < dims[k].run[r].len; i++) {
			int64_t e = elem + (dims[k].run[r].off + i) * stride[k];
			int ret;

			if (k + 1 == ndims) {
				ret = flat_block(out, child, ext, e * ext, dims[k].run[r].len);
				if (ret)
					return ret;
				break;
			}
			ret = product_walk(out, child, ext, dims, stride, k + 1, ndims, e);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* sizes[] and dims[] in the array's own order; order says which is fastest. */
static int product_flat(struct cio_flat *out, const struct cio_flat *child, int64_t ext,
			int ndims, const int *sizes, struct dim_runs *dims, int order)
{
	struct dim_runs sd[ndims];
	int64_t stride[ndims];
	int64_t s = 1;

	for (int k = ndims - 1; k >= 0; k--) {
		int d = order == MPI_ORDER_C ? k : ndims - 1 - k;

		sd[k] = dims[d];
		stride[k] = s;
		s *= sizes[d];
	}
	return ndims ? product_walk(out, child, ext, sd, stride, 0, ndims, 0) : 0;
}

static int darray_dim(struct dim_runs *d, size_t cap, int g, int distrib, int darg, int p,
		      int coord)
{
	int64_t blk;

	switch (distrib) {
	case MPI_DISTRIBUTE_NONE:
		return runs_add(d, 0, g, cap);
	case MPI_DISTRIBUTE_BLOCK:
		blk = darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : darg;
		if (coord * blk >= g)
			return 0;
		return runs_add(d, coord * blk, (coord + 1) * blk > g ? g - coord * blk : blk, cap);
	case MPI_DISTRIBUTE_CYCLIC:
		blk = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
		for (int64_t j = coord * blk; j < g; j += (int64_t)p * blk) {
			int ret = runs_add(d, j, j + blk > g ? g - j : blk, cap);

			if (ret)
				return ret;
		}
		return 0;
	}
	return -ENOTSUP;
}

/* The contents of one datatype, with the derived children it names. */
struct contents {
	int ni, na, nd, comb;
	int *i;
	MPI_Aint *a;
	MPI_Datatype *d;
};

static void contents_free(struct contents *c)
{
	for (int k = 0; k < c->nd; k++) {
		int ni, na, nd, comb;

		MPI_Type_get_envelope(c->d[k], &ni, &na, &nd, &comb);
		if (comb != MPI_COMBINER_NAMED)
			MPI_Type_free(&c->d[k]);
	}
	free(c->i);
	free(c->a);
	free(c->d);
}

static int flat_rec(MPI_Datatype t, struct cio_flat *out);

/* The child's segments (at 0) and extent. */
static int child_flat(MPI_Datatype t, struct cio_flat *child, int64_t *ext)
{
	MPI_Aint lb, e;

	cio_flat_init(child);
	MPI_Type_get_extent(t, &lb, &e);
	*ext = e;
	return flat_rec(t, child);
}

static int flat_derived(const struct contents *c, struct cio_flat *out)
{
	struct cio_flat ch;
	int64_t ext;
	int ret = 0, n = c->i[0];

	if (c->comb == MPI_COMBINER_STRUCT) {
		for (int k = 0; k < n && !ret; k++) {
			ret = child_flat(c->d[k], &ch, &ext);
			ret = ret ? ret : flat_block(out, &ch, ext, c->a[k], c->i[1 + k]);
			cio_flat_free(&ch);
		}
		return ret;
	}
	ret = child_flat(c->d[0], &ch, &ext);
	switch (c->comb) {
	case MPI_COMBINER_DUP:
	case MPI_COMBINER_RESIZED:
		ret = ret ? ret : flat_put(out, &ch, 0);
		break;
	case MPI_COMBINER_CONTIGUOUS:
		ret = ret ? ret : flat_block(out, &ch, ext, 0, n);
		break;
	case MPI_COMBINER_VECTOR:
	case MPI_COMBINER_HVECTOR: {
		int64_t stride = c->comb == MPI_COMBINER_VECTOR ? c->i[2] * ext : c->a[0];

		for (int64_t j = 0; j < n && !ret; j++)
			ret = flat_block(out, &ch, ext, j * stride, c->i[1]);
		break;
	}
	case MPI_COMBINER_INDEXED:
	case MPI_COMBINER_HINDEXED:
	case MPI_COMBINER_INDEXED_BLOCK:
	case MPI_COMBINER_HINDEXED_BLOCK:
		for (int64_t j = 0; j < n && !ret; j++) {
			int64_t disp, bl;

			switch (c->comb) {
			case MPI_COMBINER_INDEXED:
				bl = c->i[1 + j];
				disp = c->i[1 + n + j] * ext;
				break;
			case MPI_COMBINER_HINDEXED:
				bl = c->i[1 + j];
				disp = c->a[j];
				break;
			case MPI_COMBINER_INDEXED_BLOCK:
				bl = c->i[1];
				disp = c->i[2 + j] * ext;
				break;
			default:
				bl = c->i[1];
				disp = c->a[j];
			}
			ret = flat_block(out, &ch, ext, disp, bl);
		}
		break;
	case MPI_COMBINER_SUBARRAY: {
		/* ndims, sizes[], subsizes[], starts[], order */
		struct cio_seg run[n];
		struct dim_runs dims[n];

		for (int k = 0; k < n && !ret; k++) {
			dims[k].run = &run[k];
			dims[k].n = 0;
			ret = runs_add(&dims[k], c->i[1 + 2 * n + k], c->i[1 + n + k], 1);
		}
		if (!ret)
			ret = product_flat(out, &ch, ext, n, &c->i[1], dims, c->i[1 + 3 * n]);
		break;
	}
	case MPI_COMBINER_DARRAY: {
		/* size, rank, ndims, gsizes[], distribs[], dargs[], psizes[], order */
		int nd = c->i[2], rank = c->i[1];
		const int *gs = &c->i[3], *dist = &c->i[3 + nd], *darg = &c->i[3 + 2 * nd];
		const int *ps = &c->i[3 + 3 * nd];
		struct dim_runs dims[nd];
		int coord[nd];

		/* the process grid is row-major whatever the array's order */
		for (int k = nd - 1, r = rank; k >= 0; k--) {
			coord[k] = r % ps[k];
			r /= ps[k];
		}
		for (int k = 0; k < nd; k++)
			dims[k].run = NULL;
		for (int k = 0; k < nd && !ret; k++) {
			size_t cap = (size_t)gs[k] + 1;

			dims[k].n = 0;
			dims[k].run = malloc(cap * sizeof(struct cio_seg));
			ret = dims[k].run ? darray_dim(&dims[k], cap, gs[k], dist[k], darg[k],
						       ps[k], coord[k]) : -ENOMEM;
		}
		if (!ret)
			ret = product_flat(out, &ch, ext, nd, gs, dims, c->i[3 + 4 * nd]);
		for (int k = 0; k < nd; k++)
			free(dims[k].run);
		break;
	}
	default:
		ret = ret ? ret : -ENOTSUP;
	}
	cio_flat_free(&ch);
	return ret;
}

static int flat_rec(MPI_Datatype t, struct cio_flat *out)
{
	struct contents c = { 0 };
	int ret, size;

	MPI_Type_get_envelope(t, &c.ni, &c.na, &c.nd, &c.comb);
	if (c.comb == MPI_COMBINER_NAMED) {
		MPI_Type_size(t, &size);
		return cio_flat_append(out, 0, size);
	}
	c.i = malloc((c.ni + 1) * sizeof(*c.i));
	c.a = malloc((c.na + 1) * sizeof(*c.a));
	c.d = malloc((c.nd + 1) * sizeof(*c.d));
	if (!c.i || !c.a || !c.d) {
		free(c.i);
		free(c.a);
		free(c.d);
		return -ENOMEM;
	}
	MPI_Type_get_contents(t, c.ni, c.na, c.nd, c.i, c.a, c.d);
	ret = flat_derived(&c, out);
	contents_free(&c);
	return ret;
}

int cio_flat_type(MPI_Datatype t, struct cio_flat *out)
{
	MPI_Aint lb, ext;
	int ret;

	cio_flat_init(out);
	ret = flat_rec(t, out);
	if (ret) {
		cio_flat_free(out);
		return ret;
	}
	MPI_Type_get_extent(t, &lb, &ext);
	out->lb = lb;
	out->extent = ext;
	return 0;
}

/*
 * cio_view.c: a file view (displacement, etype, flattened filetype) and the
 * file segments that a run of data bytes covers through it.  The data
 * stream tiles the filetype: tile t starts at disp + t * extent.
 */
#include <errno.h>
#include <stdlib.h>

#include "cio.h"

void cio_view_free(struct cio_view *v)
{
	cio_flat_free(&v->ft);
	free(v->pref);
	v->pref = NULL;
}

int cio_view_set(struct cio_view *v, int64_t disp, MPI_Datatype etype, MPI_Datatype filetype)
{
	struct cio_view n = { .disp = disp };
	int esize, ret;

	MPI_Type_size(etype, &esize);
	n.etype_size = esize;
	ret = cio_flat_type(filetype, &n.ft);
	if (ret)
		return ret;
	if (!n.ft.size) {
		cio_flat_free(&n.ft);
		return -EINVAL;
	}
	n.pref = malloc((n.ft.n + 1) * sizeof(*n.pref));
	if (!n.pref) {
		cio_flat_free(&n.ft);
		return -ENOMEM;
	}
	n.pref[0] = 0;
	for (size_t i = 0; i < n.ft.n; i++) {
		if (i && n.ft.seg[i].off < n.ft.seg[i - 1].off + n.ft.seg[i - 1].len) {
			cio_view_free(&n);
			return -EINVAL;
		}
		n.pref[i + 1] = n.pref[i] + n.ft.seg[i].len;
	}
	n.contiguous = n.ft.n == 1 && n.ft.seg[0].len == n.ft.extent;
	cio_view_free(v);
	*v = n;
	return 0;
}

/* The segment of the filetype that holds data byte r (r < ft.size). */
static size_t seg_of(const struct cio_view *v, int64_t r)
{
	size_t lo = 0, hi = v->ft.n;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (v->pref[mid] <= r)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

int cio_view_access(const struct cio_view *v, int64_t pos, int64_t len, struct cio_flat *out)
{
	int64_t tsize = v->ft.size, ext = v->ft.extent;
	int64_t t = pos / tsize, r = pos % tsize;
	size_t i;
	int ret;

	cio_flat_init(out);
	if (v->contiguous)
		return cio_flat_append(out, v->disp + t * ext + v->ft.seg[0].off + r, len);
	i = seg_of(v, r);
	while (len > 0) {
		const struct cio_seg *s = &v->ft.seg[i];
		int64_t in = r - v->pref[i];
		int64_t n = s->len - in < len ? s->len - in : len;

		ret = cio_flat_append(out, v->disp + t * ext + s->off + in, n);
		if (ret)
			return ret;
		len -= n;
		r += n;
		if (++i == v->ft.n) {
			i = 0;
			r = 0;
			t++;
		}
	}
	return 0;
}

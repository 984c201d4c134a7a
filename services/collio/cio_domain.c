/*
 * cio_domain.c: the file domains of two-phase I/O.  The range every rank
 * touches, [lo, hi), is cut into nagg equal domains whose boundaries are
 * multiples of the stripe unit (so no two aggregators write one stripe, the
 * lock contention ROMIO's Lustre driver avoids the same way); aggregators
 * are spread evenly over the ranks.
 */
#include <errno.h>
#include <stdlib.h>

#include "cio.h"

void cio_domains_free(struct cio_domains *d)
{
	free(d->agg_rank);
	free(d->start);
	free(d->end);
	d->agg_rank = NULL;
	d->start = d->end = NULL;
}

int cio_domains_make(struct cio_domains *d, int64_t lo, int64_t hi, int nagg, int nprocs,
		     int64_t su, int64_t cb)
{
	int64_t base, size;

	if (nagg <= 0 || nagg > nprocs)
		nagg = nprocs;
	if (su <= 0)
		su = 1;
	d->nagg = nagg;
	d->rounds = 0;
	d->agg_rank = malloc(nagg * sizeof(*d->agg_rank));
	d->start = malloc(nagg * sizeof(*d->start));
	d->end = malloc(nagg * sizeof(*d->end));
	if (!d->agg_rank || !d->start || !d->end) {
		cio_domains_free(d);
		return -ENOMEM;
	}
	base = lo / su * su;
	size = (hi - base + nagg - 1) / nagg;
	size = (size + su - 1) / su * su;
	for (int a = 0; a < nagg; a++) {
		int64_t s = base + a * size, e = s + size;

		d->agg_rank[a] = (int)((int64_t)a * nprocs / nagg);
		d->start[a] = s < lo ? lo : s > hi ? hi : s;
		d->end[a] = e > hi ? hi : e < d->start[a] ? d->start[a] : e;
		if ((d->end[a] - d->start[a] + cb - 1) / cb > d->rounds)
			d->rounds = (d->end[a] - d->start[a] + cb - 1) / cb;
	}
	return 0;
}

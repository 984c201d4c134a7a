/*
 * cio_views.c: the test views (cio_views.h).  Units are elements of 3
 * bytes; rank r owns units [6r, 6r + 6) of every period of 6 * nprocs
 * units, of which each view keeps some.
 */
#include <string.h>

#include "cio_views.h"

const char *const cio_view_names[] = {
	"contiguous", "vector", "hvector", "indexed", "hindexed", "indexed_block",
	"hindexed_block", "struct", "subarray_c", "subarray_f", "darray", "darray3d",
	"resized", NULL,
};

enum { ESIZE = 3, PERIOD = 6 };

/* t resized to one period, freed. */
static MPI_Datatype period(MPI_Datatype t, int nprocs)
{
	MPI_Datatype r;

	MPI_Type_create_resized(t, 0, (MPI_Aint)PERIOD * nprocs * ESIZE, &r);
	MPI_Type_free(&t);
	return r;
}

int cio_view_make(const char *name, int rank, int nprocs, MPI_Datatype *filetype,
		  MPI_Offset *disp)
{
	MPI_Datatype e, t;
	int lens[2] = { 2, 1 }, displs[2] = { 0, 3 };
	MPI_Aint hdispls[2] = { 0, 3 * ESIZE };
	int rc = 0;

	MPI_Type_contiguous(ESIZE, MPI_BYTE, &e);
	*disp = (MPI_Offset)PERIOD * ESIZE * rank;
	if (!strcmp(name, "contiguous")) {
		MPI_Type_contiguous(PERIOD, e, &t);
		t = period(t, nprocs);
	} else if (!strcmp(name, "vector")) {
		MPI_Type_vector(2, 2, 3, e, &t);
		t = period(t, nprocs);
	} else if (!strcmp(name, "hvector")) {
		MPI_Type_create_hvector(2, 1, 4 * ESIZE, e, &t);
		t = period(t, nprocs);
	} else if (!strcmp(name, "indexed")) {
		MPI_Type_indexed(2, lens, displs, e, &t);
		t = period(t, nprocs);
	} else if (!strcmp(name, "hindexed")) {
		MPI_Type_create_hindexed(2, lens, hdispls, e, &t);
		t = period(t, nprocs);
	} else if (!strcmp(name, "indexed_block")) {
		MPI_Type_create_indexed_block(2, 2, displs, e, &t);
		t = period(t, nprocs);
	} else if (!strcmp(name, "hindexed_block")) {
		MPI_Type_create_hindexed_block(2, 1, hdispls, e, &t);
		t = period(t, nprocs);
	} else if (!strcmp(name, "struct")) {
		MPI_Datatype types[2] = { e, MPI_BYTE };
		int blens[2] = { 1, 5 };

		MPI_Type_create_struct(2, blens, hdispls, types, &t);
		t = period(t, nprocs);
	} else if (!strcmp(name, "subarray_c") || !strcmp(name, "subarray_f")) {
		int c = name[9] == 'c';
		int sizes[2] = { 4, 3 * nprocs }, sub[2] = { 3, 2 }, starts[2] = { 1, 3 * rank };

		if (!c) {
			sizes[0] = 3 * nprocs, sizes[1] = 4;
			sub[0] = 2, sub[1] = 3;
			starts[0] = 3 * rank, starts[1] = 1;
		}
		MPI_Type_create_subarray(2, sizes, sub, starts, c ? MPI_ORDER_C : MPI_ORDER_FORTRAN,
					 e, &t);
		*disp = 0;
	} else if (!strcmp(name, "darray") || !strcmp(name, "darray3d")) {
		int three = name[6] == '3', nd = three ? 3 : 2;
		int gs[3] = { 5, 7, 3 }, dims[3] = { 0, 0, 0 };
		int dist[3] = { MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK };
		int darg[3] = { 2, MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG };

		if (three)
			dist[0] = MPI_DISTRIBUTE_BLOCK, darg[0] = MPI_DISTRIBUTE_DFLT_DARG;
		MPI_Dims_create(nprocs, nd, dims);
		MPI_Type_create_darray(nprocs, rank, nd, gs, dist, darg, dims,
				       three ? MPI_ORDER_FORTRAN : MPI_ORDER_C, e, &t);
		*disp = 0;
	} else if (!strcmp(name, "resized")) {
		MPI_Type_create_resized(e, 0, (MPI_Aint)ESIZE * nprocs, &t);
		*disp = (MPI_Offset)ESIZE * rank;
	} else {
		rc = -1;
	}
	MPI_Type_free(&e);
	if (rc)
		return rc;
	MPI_Type_commit(&t);
	*filetype = t;
	return 0;
}

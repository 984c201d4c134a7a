/*
 * cio_views.h: the file views the collio tests write through, one per
 * datatype constructor, over an element of 3 bytes (odd on purpose).  Every
 * rank's filetype tiles with the others' and leaves holes of its own.
 */
#ifndef LOGGP_CIO_VIEWS_H
#define LOGGP_CIO_VIEWS_H

#include <mpi.h>

/* The names cio_view_make accepts, NULL-terminated. */
extern const char *const cio_view_names[];

/* Rank's filetype and displacement for view name among nprocs; 0, or -1
 * for an unknown name.  The caller frees *filetype. */
int cio_view_make(const char *name, int rank, int nprocs, MPI_Datatype *filetype,
		  MPI_Offset *disp);

#endif

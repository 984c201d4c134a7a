/*
 * cio_hints_arg.h: the -H k=v,k=v option of the collio test programs as an
 * MPI_Info.
 */
#ifndef LOGGP_CIO_HINTS_ARG_H
#define LOGGP_CIO_HINTS_ARG_H

#include <mpi.h>

/* Sets every key=value of hints (cut up in place) in info; an item without
 * '=' is skipped. */
void cio_hints_arg(char *hints, MPI_Info info);

#endif

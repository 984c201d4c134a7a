/*
 * collio.h: what a program can ask the collio library when it is loaded
 * (README.md, "Breakdown").  Programs that must also run without it look the
 * functions up with dlsym(RTLD_DEFAULT, name) and skip them when absent.
 */
#ifndef LOGGP_COLLIO_H
#define LOGGP_COLLIO_H

/* The phases of the breakdown, in the order loggp_collio_breakdown fills. */
#define COLLIO_PHASES \
	"all2all", "shuffle", "waitall", "write", "post_write", "sync", "not_hidden_sync"
#define COLLIO_NPHASES 7

/*
 * This rank's seconds in each phase over every collio call since the last
 * call of this function (then reset); fills at most n and returns how many
 * phases there are.
 */
int loggp_collio_breakdown(double *t, int n);
/* Completes every deferred close (as MPI_Finalize would), each failure
 * agreed by its file's ranks: MPI_SUCCESS or MPI_ERR_IO.  Collective over
 * every process, like MPI_Finalize. */
int loggp_collio_drain(void);

#endif

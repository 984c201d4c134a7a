/*
 * cio_passthru.c: the MPI-IO data calls collio does not serve.  On a collio
 * file with a cache, this rank's cache is synced first, so that Open MPI's
 * own path never races a later sync of older data (and reads see what was
 * written); then the call passes through.  The split collectives' _end
 * calls and MPI_Wait need nothing: their _begin or i-call flushed.
 */
#include <string.h>

#include "cio.h"

/* MPI_SUCCESS, or MPI_ERR_IO when the sync of earlier writes failed. */
static int flush_local(MPI_File fh)
{
	struct cio_file *f = cio_file_find(fh);
	int ret = f && f->cache ? cio_cache_flush(f->cache) : 0;

	if (ret)
		cio_warn("sync of %s: %s", f->path, strerror(-ret));
	return ret ? MPI_ERR_IO : MPI_SUCCESS;
}

#define PASS(name, params, args)                                              \
	int MPI_File_##name(MPI_File fh, params)                              \
	{                                                                     \
		int ret = flush_local(fh);                                    \
                                                                              \
		return ret == MPI_SUCCESS ? PMPI_File_##name(fh, args) : ret; \
	}

#define P(...) __VA_ARGS__

PASS(iwrite_all, P(const void *buf, int count, MPI_Datatype type, MPI_Request *req),
     P(buf, count, type, req))
PASS(iwrite_at_all, P(MPI_Offset off, const void *buf, int count, MPI_Datatype type, MPI_Request *req),
     P(off, buf, count, type, req))
PASS(iread_all, P(void *buf, int count, MPI_Datatype type, MPI_Request *req),
     P(buf, count, type, req))
PASS(iread_at_all, P(MPI_Offset off, void *buf, int count, MPI_Datatype type, MPI_Request *req),
     P(off, buf, count, type, req))
PASS(iwrite, P(const void *buf, int count, MPI_Datatype type, MPI_Request *req),
     P(buf, count, type, req))
PASS(iwrite_at, P(MPI_Offset off, const void *buf, int count, MPI_Datatype type, MPI_Request *req),
     P(off, buf, count, type, req))
PASS(iread, P(void *buf, int count, MPI_Datatype type, MPI_Request *req),
     P(buf, count, type, req))
PASS(iread_at, P(MPI_Offset off, void *buf, int count, MPI_Datatype type, MPI_Request *req),
     P(off, buf, count, type, req))
PASS(iwrite_shared, P(const void *buf, int count, MPI_Datatype type, MPI_Request *req),
     P(buf, count, type, req))
PASS(iread_shared, P(void *buf, int count, MPI_Datatype type, MPI_Request *req),
     P(buf, count, type, req))
PASS(write, P(const void *buf, int count, MPI_Datatype type, MPI_Status *st),
     P(buf, count, type, st))
PASS(write_at, P(MPI_Offset off, const void *buf, int count, MPI_Datatype type, MPI_Status *st),
     P(off, buf, count, type, st))
PASS(read, P(void *buf, int count, MPI_Datatype type, MPI_Status *st),
     P(buf, count, type, st))
PASS(read_at, P(MPI_Offset off, void *buf, int count, MPI_Datatype type, MPI_Status *st),
     P(off, buf, count, type, st))
PASS(write_shared, P(const void *buf, int count, MPI_Datatype type, MPI_Status *st),
     P(buf, count, type, st))
PASS(read_shared, P(void *buf, int count, MPI_Datatype type, MPI_Status *st),
     P(buf, count, type, st))
PASS(write_ordered, P(const void *buf, int count, MPI_Datatype type, MPI_Status *st),
     P(buf, count, type, st))
PASS(read_ordered, P(void *buf, int count, MPI_Datatype type, MPI_Status *st),
     P(buf, count, type, st))
PASS(write_all_begin, P(const void *buf, int count, MPI_Datatype type),
     P(buf, count, type))
PASS(write_at_all_begin, P(MPI_Offset off, const void *buf, int count, MPI_Datatype type),
     P(off, buf, count, type))
PASS(read_all_begin, P(void *buf, int count, MPI_Datatype type),
     P(buf, count, type))
PASS(read_at_all_begin, P(MPI_Offset off, void *buf, int count, MPI_Datatype type),
     P(off, buf, count, type))
PASS(write_ordered_begin, P(const void *buf, int count, MPI_Datatype type),
     P(buf, count, type))
PASS(read_ordered_begin, P(void *buf, int count, MPI_Datatype type),
     P(buf, count, type))

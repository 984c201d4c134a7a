/*
 * cio_mpiio.c: the MPI-IO calls collio intercepts (the library is loaded
 * with LD_PRELOAD; Open MPI's MPI_File_* are weak symbols over PMPI_File_*).
 * A file opened without e10_* hints is Open MPI's alone: every call passes
 * through unchanged.  On a collio file, the collective reads and writes are
 * collio's two-phase; the other calls that touch data flush the cache first
 * and pass through.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cio.h"

/* Every open and close is collective: the deferred closes of its ranks are
 * completed there, and their errors delivered (cio_file.c). */
int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info,
		  MPI_File *fh)
{
	int ret = cio_file_drain_comm(comm), err;

	if (ret != MPI_SUCCESS)
		return ret;
	ret = PMPI_File_open(comm, filename, amode, info, fh);
	if (ret != MPI_SUCCESS)
		return ret;
	if (cio_file_open(comm, filename, amode, info, *fh, &err)) {
		PMPI_File_close(fh);
		return err;
	}
	return MPI_SUCCESS;
}

int MPI_File_close(MPI_File *fh)
{
	struct cio_file *f = cio_file_find(*fh);
	int ret = MPI_SUCCESS, pret;

	if (f) {
		ret = cio_file_close(f);
	} else if (*fh != MPI_FILE_NULL) {
		MPI_Group g;

		PMPI_File_get_group(*fh, &g);
		ret = cio_file_drain(g);
		MPI_Group_free(&g);
	}
	pret = PMPI_File_close(fh);
	return ret != MPI_SUCCESS ? ret : pret;
}

int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
		      const char *datarep, MPI_Info info)
{
	struct cio_file *f = cio_file_find(fh);
	int ret = PMPI_File_set_view(fh, disp, etype, filetype, datarep, info);

	if (ret != MPI_SUCCESS || !f)
		return ret;
	ret = cio_view_set(&f->view, disp, etype, filetype);
	if (ret) {
		cio_warn("view of %s: %s", f->path,
			 ret == -EINVAL ? "the filetype's offsets decrease or it has no data" :
			 "a filetype built with a combiner collio does not know");
		return MPI_ERR_TYPE;
	}
	return MPI_SUCCESS;
}

/* As Open MPI's own calls fill it: the bytes moved, so that MPI_Get_count
 * and MPI_Get_elements(_x) count them in whatever datatype the caller asks
 * with (MPI_Status_set_elements takes basic elements of its datatype, not
 * items: HDF5 checks the elements of its derived buffer types). */
static void set_status(MPI_Status *status, int64_t bytes)
{
	if (status == MPI_STATUS_IGNORE)
		return;
	MPI_Status_set_elements_x(status, MPI_BYTE, bytes);
	MPI_Status_set_cancelled(status, 0);
}

/* Where count elements of type lie in buf as one run in type map order, so
 * that the two-phase can use buf itself; NULL when they must be packed. */
static char *dense_run(void *buf, int count, MPI_Datatype type, int size)
{
	struct cio_flat fl;
	char *run = NULL;

	if (cio_flat_type(type, &fl))
		return NULL;
	if (fl.n == 1 && fl.seg[0].len == size && (count == 1 || fl.extent == size))
		run = (char *)buf + fl.seg[0].off;
	cio_flat_free(&fl);
	return run;
}

/* The collective write or read of count elements of type at offset
 * (etypes, in the view). */
static int collective(struct cio_file *f, MPI_Offset offset, void *buf, int count,
		      MPI_Datatype type, MPI_Status *status, int write, const char *op)
{
	struct cio_flat acc;
	char *packed, *run;
	int size, pos = 0, ret;
	int64_t len;

	MPI_Type_size(type, &size);
	len = (int64_t)size * count;
	memset(f->t, 0, sizeof(f->t));
	/* coherent: no rank reads what an aggregator has not synced yet */
	if (!write && f->hints.cache == CIO_CACHE_COHERENT) {
		ret = cio_file_flush(f);
		if (ret != MPI_SUCCESS)
			return ret;
	} else if (f->cache) {
		f->pending_err = cio_cache_error(f->cache);
	}
	run = len ? dense_run(buf, count, type, size) : NULL;
	packed = run ? NULL : malloc(len + 1);
	ret = run || packed ? cio_view_access(&f->view, offset * f->view.etype_size, len, &acc) : -1;
	if (ret) {
		free(packed);
		return MPI_ERR_NO_MEM;
	}
	if (write && run) {
		ret = cio_twophase_write(f, &acc, run);
	} else if (write) {
		MPI_Pack(buf, count, type, packed, (int)(len + 1), &pos, MPI_COMM_SELF);
		ret = cio_twophase_write(f, &acc, packed);
	} else if (run) {
		ret = cio_twophase_read(f, &acc, run);
	} else {
		ret = cio_twophase_read(f, &acc, packed);
		MPI_Unpack(packed, (int)(len + 1), &pos, buf, count, type, MPI_COMM_SELF);
	}
	if (f->cache)
		f->t[CIO_T_SYNC] += cio_cache_sync_seconds(f->cache);
	cio_flat_free(&acc);
	free(packed);
	if (ret == MPI_SUCCESS)
		set_status(status, len);
	cio_file_report(f, op, len);
	return ret;
}

/* At the individual file pointer, which then moves past the data. */
static int at_pointer(struct cio_file *f, void *buf, int count, MPI_Datatype type,
		      MPI_Status *status, int write, const char *op)
{
	MPI_Offset off;
	int size, ret;

	PMPI_File_get_position(f->fh, &off);
	ret = collective(f, off, buf, count, type, status, write, op);
	MPI_Type_size(type, &size);
	PMPI_File_seek(f->fh, off + (MPI_Offset)size * count / f->view.etype_size, MPI_SEEK_SET);
	return ret;
}

int MPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype type,
		       MPI_Status *status)
{
	struct cio_file *f = cio_file_find(fh);

	if (!f)
		return PMPI_File_write_all(fh, buf, count, type, status);
	return at_pointer(f, (void *)buf, count, type, status, 1, "write_all");
}

int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
			  MPI_Datatype type, MPI_Status *status)
{
	struct cio_file *f = cio_file_find(fh);

	if (!f)
		return PMPI_File_write_at_all(fh, offset, buf, count, type, status);
	return collective(f, offset, (void *)buf, count, type, status, 1, "write_at_all");
}

int MPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype type, MPI_Status *status)
{
	struct cio_file *f = cio_file_find(fh);

	if (!f)
		return PMPI_File_read_all(fh, buf, count, type, status);
	return at_pointer(f, buf, count, type, status, 0, "read_all");
}

int MPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count,
			 MPI_Datatype type, MPI_Status *status)
{
	struct cio_file *f = cio_file_find(fh);

	if (!f)
		return PMPI_File_read_at_all(fh, offset, buf, count, type, status);
	return collective(f, offset, buf, count, type, status, 0, "read_at_all");
}

int MPI_File_sync(MPI_File fh)
{
	struct cio_file *f = cio_file_find(fh);
	int ret;

	if (!f)
		return PMPI_File_sync(fh);
	memset(f->t, 0, sizeof(f->t));
	ret = cio_file_flush(f);
	if (ret == MPI_SUCCESS && f->is_agg && fsync(f->gfd))
		cio_warn("fsync of %s: %s", f->path, strerror(errno));
	cio_file_report(f, "sync", 0);
	return ret == MPI_SUCCESS ? PMPI_File_sync(fh) : ret;
}

int MPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
	struct cio_file *f = cio_file_find(fh);

	/* not collective: only this rank's cache can be waited for */
	if (f && f->cache && cio_cache_flush(f->cache))
		return MPI_ERR_IO;
	return PMPI_File_get_size(fh, size);
}

int MPI_File_set_size(MPI_File fh, MPI_Offset size)
{
	struct cio_file *f = cio_file_find(fh);
	int ret = f ? cio_file_flush(f) : MPI_SUCCESS;

	return ret == MPI_SUCCESS ? PMPI_File_set_size(fh, size) : ret;
}

int MPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
	struct cio_file *f = cio_file_find(fh);
	int ret = f ? cio_file_flush(f) : MPI_SUCCESS;

	return ret == MPI_SUCCESS ? PMPI_File_preallocate(fh, size) : ret;
}

int MPI_File_get_info(MPI_File fh, MPI_Info *info)
{
	struct cio_file *f = cio_file_find(fh);
	int ret = PMPI_File_get_info(fh, info);

	if (ret == MPI_SUCCESS && f)
		cio_hints_to_info(&f->hints, f->nprocs, *info);
	return ret;
}

/* MPI_Finalize is collective over every process: every deferred close
 * completes, its error agreed by its communicator's ranks. */
int MPI_Finalize(void)
{
	int ret = cio_file_drain(MPI_GROUP_NULL), pret = PMPI_Finalize();

	return ret != MPI_SUCCESS ? ret : pret;
}

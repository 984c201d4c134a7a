/* SPDX-License-Identifier: MIT */
/*
 * wl_result.c: the workload result line (docs/results.md).
 *
 * wl_result_reduce() is collective over MPI_COMM_WORLD; it uses only
 * collectives, so the point-to-point counts it reduces are not disturbed.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "wl.h"

int wl_result_reduce(const struct wl_prog *p, bool valid, double time_s,
		     const struct wl_msgs *mine, const struct wl_critical *crit,
		     struct wl_result *r)
{
	int64_t row[4] = { mine->sent, mine->sent_bytes, mine->recvd, mine->recvd_bytes };
	char host[MPI_MAX_PROCESSOR_NAME > WL_HOST_LEN ? MPI_MAX_PROCESSOR_NAME : WL_HOST_LEN] = "";
	int64_t *all = NULL;
	int ok = valid, all_ok, alloc_ok = 1, i, ret = 0, len = 0;

	*r = (struct wl_result){ .ranks = p->nranks, .critical = *crit };
	MPI_Allreduce(&time_s, &r->time_s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	r->valid = all_ok;
	if (!p->rank) {
		all = malloc(sizeof(*all) * 4 * (size_t)p->nranks);
		r->per_rank = malloc(sizeof(*r->per_rank) * (size_t)p->nranks);
		r->hosts = calloc((size_t)p->nranks, WL_HOST_LEN);
		alloc_ok = all && r->per_rank && r->hosts;
	}
	/* every rank learns whether rank 0 can take the gather */
	MPI_Bcast(&alloc_ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (!alloc_ok) {
		ret = -ENOMEM;
		goto err;
	}
	MPI_Gather(row, 4, MPI_INT64_T, all, 4, MPI_INT64_T, 0, MPI_COMM_WORLD);
	/* where each rank ran: a run across hosts shows it in the result */
	MPI_Get_processor_name(host, &len);
	host[WL_HOST_LEN - 1] = '\0';
	MPI_Gather(host, WL_HOST_LEN, MPI_CHAR, r->hosts, WL_HOST_LEN, MPI_CHAR, 0, MPI_COMM_WORLD);
	if (p->rank)
		return 0;
	for (i = 0; i < p->nranks; i++) {
		const int64_t *x = all + 4 * i;

		r->per_rank[i] = x[0];
		r->msgs_total += x[0];
		r->msgs_bytes += x[1];
	}
	free(all);
	return 0;
err:
	free(all);
	wl_result_fini(r);
	return ret;
}

/* sep, then a processor name as a JSON string: a host name's characters (letters, digits,
 * - . _) as they are, any other as '?', so the line stays JSON whatever MPI reports */
static void wl_print_host(FILE *f, const char *sep, const char *s)
{
	fprintf(f, "%s\"", sep);
	for (; *s; s++)
		fputc(isalnum((unsigned char)*s) || strchr("-._", *s) ? *s : '?', f);
	fputc('"', f);
}

static void wl_print_num(FILE *f, double v)
{
	/* JSON has no NaN or infinity; metrics are finite by construction */
	fprintf(f, "%.9g", isfinite(v) ? v : 0.0);
}

void wl_result_print(FILE *f, const struct wl_prog *p,
		     const struct wl_result *r,
		     const struct wl_metric *metrics, int nmetrics,
		     const struct wl_param *params, int nparams)
{
	int i;

	fprintf(f, "{\"loggp_result\": 1, \"workload\": \"%s\", \"valid\": %s, \"ranks\": %d",
		p->name, r->valid ? "true" : "false", r->ranks);
	fprintf(f, ", \"hosts\": [");
	for (i = 0; i < r->ranks; i++)
		wl_print_host(f, i ? ", " : "", r->hosts + (size_t)i * WL_HOST_LEN);
	fprintf(f, "]");
	fprintf(f, ", \"metrics\": {\"time_s\": ");
	wl_print_num(f, r->time_s);
	for (i = 0; i < nmetrics; i++) {
		fprintf(f, ", \"%s\": ", metrics[i].name);
		wl_print_num(f, metrics[i].value);
	}
	fprintf(f, "}, \"msgs\": {\"total\": %" PRId64 ", \"bytes\": %" PRId64
		", \"per_rank\": [", r->msgs_total, r->msgs_bytes);
	for (i = 0; i < r->ranks; i++)
		fprintf(f, "%s%" PRId64, i ? ", " : "", r->per_rank[i]);
	fprintf(f, "], \"critical_path\": %" PRId64 ", \"critical_sends\": %" PRId64
		", \"critical_recvs\": %" PRId64 ", \"critical_bytes\": %" PRId64 "}",
		r->critical.path, r->critical.sends, r->critical.recvs, r->critical.bytes);
	fprintf(f, ", \"params\": {");
	for (i = 0; i < nparams; i++) {
		fprintf(f, "%s\"%s\": ", i ? ", " : "", params[i].name);
		if (params[i].str)
			fprintf(f, "\"%s\"", params[i].str);
		else
			fprintf(f, "%" PRId64, params[i].value);
	}
	fprintf(f, "}}\n");
	fflush(f);
}

void wl_result_fini(struct wl_result *r)
{
	free(r->per_rank);
	free(r->hosts);
	r->per_rank = NULL;
	r->hosts = NULL;
}

/* SPDX-License-Identifier: MIT */
/* Table and JSON output; see calib_report.h. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "calib_err.h"
#include "calib_report.h"

extern char **environ;

void calib_report_table(FILE *out, const struct calib_opts *opts,
			const char *provider, const struct calib_results *r)
{
	const struct {
		const char *name;
		const struct calib_stat *st;
	} rows[] = {
		{ "half_rtt", &r->half_rtt }, { "o_s", &r->o_s },
		{ "o_r", &r->o_r }, { "g", &r->g }, { "L", &r->L },
	};
	unsigned i;

	fprintf(out, "%s: provider %s, ep %s, %u samples per point, burst %u\n",
		CALIB_NAME, provider, opts->ep_type, opts->iterations,
		opts->burst);
	if (opts->spin_send_ns || opts->spin_recv_ns)
		fprintf(out, "control: the ping-pong spins %llu ns before each send, %llu ns after each receive\n",
			(unsigned long long)opts->spin_send_ns,
			(unsigned long long)opts->spin_recv_ns);
	fprintf(out, "%-10s %12s %12s\n", "parameter", "median_us", "p99_us");
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		fprintf(out, "%-10s %12.3f %12.3f\n", rows[i].name,
			rows[i].st->median, rows[i].st->p99);
	fprintf(out, "%-10s %12.4f ns/B (R^2 %.4f)\n", "G", r->G, r->G_r2);
	fprintf(out, "%10s %14s %12s\n", "size_B", "half_rtt_us", "gap_us");
	for (i = 0; i < opts->nsizes; i++)
		fprintf(out, "%10zu %14.3f %12.3f\n", opts->sizes[i],
			r->half_rtt_size[i], r->gap[i]);
}

static void calib_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* JSON has no NaN: an undefined value is written as null. */
static void calib_json_number(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.4f", v);
	else
		fputs("null", f);
}

static void calib_json_stat(FILE *f, const char *name,
			    const struct calib_stat *st, int last)
{
	fprintf(f, "\"%s\":{\"p10\":", name);
	calib_json_number(f, st->p10);
	fputs(",\"median\":", f);
	calib_json_number(f, st->median);
	fputs(",\"p99\":", f);
	calib_json_number(f, st->p99);
	fputs(last ? "}" : "},", f);
}

/* Only the LOGGP_* variables: they are the knobs the run was made under. */
static void calib_json_env(FILE *f)
{
	const char *eq;
	char **e;
	int first = 1;

	fputs("\"env\":{", f);
	for (e = environ; *e; e++) {
		eq = strchr(*e, '=');
		if (strncmp(*e, "LOGGP_", 6) || !eq)
			continue;
		if (!first)
			fputc(',', f);
		first = 0;
		fprintf(f, "\"%.*s\":", (int)(eq - *e), *e);
		calib_json_string(f, eq + 1);
	}
	fputc('}', f);
}

int calib_report_json(const char *path, const struct calib_opts *opts,
		      const char *provider, const struct calib_results *r)
{
	FILE *f;
	unsigned i;
	int ret = 0;

	f = fopen(path, "w");
	if (!f) {
		ret = -errno;
		calib_err("cannot write %s: %s", path, strerror(errno));
		return ret;
	}
	fprintf(f, "{\"tool\":\"%s\",\"version\":1,\"provider\":", CALIB_NAME);
	calib_json_string(f, provider);
	fputs(",\"ep_type\":", f);
	calib_json_string(f, opts->ep_type);
	fprintf(f, ",\"iterations\":%u,\"control\":{\"spin_send_ns\":%llu,"
		"\"spin_recv_ns\":%llu},\"sizes\":[", opts->iterations,
		(unsigned long long)opts->spin_send_ns,
		(unsigned long long)opts->spin_recv_ns);
	for (i = 0; i < opts->nsizes; i++)
		fprintf(f, "%s%zu", i ? "," : "", opts->sizes[i]);
	fputs("],\"results\":{", f);
	calib_json_stat(f, "half_rtt_us", &r->half_rtt, 0);
	calib_json_stat(f, "o_s_us", &r->o_s, 0);
	calib_json_stat(f, "o_r_us", &r->o_r, 0);
	calib_json_stat(f, "g_us", &r->g, 0);
	calib_json_stat(f, "L_us", &r->L, 0);
	fputs("\"G_ns_per_B\":{\"value\":", f);
	calib_json_number(f, r->G);
	fputs(",\"r2\":", f);
	calib_json_number(f, r->G_r2);
	fputs("}},\"per_size\":{\"half_rtt_us\":[", f);
	for (i = 0; i < opts->nsizes; i++) {
		fputs(i ? "," : "", f);
		calib_json_number(f, r->half_rtt_size[i]);
	}
	fputs("],\"gap_us\":[", f);
	for (i = 0; i < opts->nsizes; i++) {
		fputs(i ? "," : "", f);
		calib_json_number(f, r->gap[i]);
	}
	fputs("]},", f);
	calib_json_env(f);
	fputs("}\n", f);
	if (ferror(f))
		ret = -EIO;
	if (fclose(f) && !ret)
		ret = -errno;
	if (ret)
		calib_err("cannot write %s: %s", path, strerror(-ret));
	return ret;
}

/* SPDX-License-Identifier: MIT */
/*
 * Provider entry point and process-wide configuration.
 *
 * The provider has no getinfo, which is what makes libfabric register it
 * as a hook; FI_HOOK=loggp selects it.  Knobs come from LOGGP_<KNOB>; each
 * is also declared as a libfabric parameter (FI_OFI_HOOK_LOGGP_<KNOB>,
 * listed by `fi_info -e`) and read from there when LOGGP_<KNOB> is unset.
 * Names, forms and help come from the registry (lgp/knobs.def), the
 * parsing and the environment check from lgp_core.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <lgp/clock.h>
#include <lgp/env.h>

#include "lgp_config.h"
#include "lgp_fabric.h"
#include "lgp_log.h"
#include "lgp_teardown.h"

static struct lgp_config lgp_cfg;
static pthread_once_t lgp_cfg_once = PTHREAD_ONCE_INIT;

extern char **environ;

/* A knob's text: LOGGP_<KNOB>, else the libfabric parameter of its name. */
static const char *lgp_knob_text(enum lgp_knob knob, void *ctx)
{
	const char *v = getenv(lgp_knob_env(knob));
	char *pv = NULL;

	if (v)
		return v;
	if (fi_param_get_str(&lgp_prov, lgp_knob_name(knob), &pv) == FI_SUCCESS)
		return pv;
	return NULL;
}

/*
 * The counters are written at exit, when nobody could act on a failure:
 * a file that cannot be appended to is refused now, before any fabric runs,
 * and so is anything but a regular file (a FIFO would block the open, and
 * /dev/full or /dev/null would lose the counters): lgp_stats_file_open().
 */
static int lgp_stats_file_check(const char *path, char *errmsg, size_t len)
{
	int fd = lgp_stats_file_open(path);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	snprintf(errmsg, len, "cannot write %s '%.120s': %s (the shim's counters go there: "
		 "a regular file)", lgp_setting_env(LGP_SETTING_STATS_FILE), path,
		 fd == -EINVAL ? "not a regular file" : strerror(-fd));
	return fd;
}

int lgp_stats_file_open(const char *path)
{
	struct stat st;
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0644);

	if (fd < 0)
		return errno == ENXIO ? -EINVAL : -errno; /* ENXIO: a FIFO nobody reads */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

/*
 * The rank an MPI launcher gives the process (Open MPI, PMIx, MPICH), -1
 * for none: with one LOGGP_SEED every rank draws its own delays, the same
 * in every run, instead of all ranks the same ones; a topology keeps the
 * rank's row (lgp_topo.h).
 */
static long lgp_launcher_rank(void)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_RANK", "PMIX_RANK",
					    "PMI_RANK" };
	const char *v;
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if ((v = getenv(vars[i])))
			return strtol(v, NULL, 10);
	return -1;
}

/*
 * The schedule's time 0 on the shim's clock: its start line (the ranks'
 * common origin) mapped through CLOCK_REALTIME read beside the clock, or
 * now.
 */
static void lgp_sched_origin_now(struct lgp_config *c)
{
	struct timespec ts;
	uint64_t now = lgp_now_ns(), real;

	clock_gettime(CLOCK_REALTIME, &ts);
	real = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	c->sched_origin = lgp_sched_origin(&c->sched, now, real);
	c->sched_origin_unix_ns = real - (uint64_t)((int64_t)now - c->sched_origin);
}

/*
 * A LOGGP_* name that is not in the registry, a setting's bad value or a
 * knob's bad value all leave c->error set: the shim then refuses to run.
 */
static void lgp_config_load(void)
{
	struct lgp_config *c = &lgp_cfg;
	const char *sf, *pt, *topo, *sched;
	long rank = lgp_launcher_rank();
	int ret;

	memset(c, 0, sizeof(*c));
	ret = lgp_env_check(environ, c->errmsg, sizeof(c->errmsg));
	if (!ret)
		ret = lgp_params_read(&c->params, lgp_knob_text, NULL,
				      c->errmsg, sizeof(c->errmsg));
	if (!ret)
		ret = lgp_dist_from_env(&c->dist, c->params.latency_ns,
					c->errmsg, sizeof(c->errmsg));
	topo = getenv(lgp_setting_env(LGP_SETTING_TOPOLOGY));
	if (!ret && topo)
		ret = lgp_topo_load(&c->topo, topo, rank, c->errmsg, sizeof(c->errmsg));
	sched = getenv(lgp_setting_env(LGP_SETTING_SCHEDULE));
	if (!ret && sched)
		ret = lgp_sched_load(&c->sched, sched, &c->params, c->errmsg,
				     sizeof(c->errmsg));
	if (ret) {
		c->error = ret;
		return;
	}
	c->peak = c->sched.steps ? c->sched.peak : c->params;
	c->active = lgp_params_active(&c->peak) || lgp_dist_active(&c->dist) ||
		    c->topo.adds;
	c->dist_stream = (uint64_t)(rank < 0 ? 0 : rank) << 32;
	pt = getenv(lgp_setting_env(LGP_SETTING_PROGRESS_THREAD));
	c->progress_idle = !pt || !strcmp(pt, "idle");
	sf = getenv(lgp_setting_env(LGP_SETTING_STATS_FILE));
	if (sf) {
		snprintf(c->stats_file, sizeof(c->stats_file), "%s", sf);
		ret = lgp_stats_file_check(c->stats_file, c->errmsg, sizeof(c->errmsg));
		if (ret) {
			c->error = ret;
			return;
		}
	}
	if (c->active)
		lgp_clock_init();
	if (c->sched.steps)
		lgp_sched_origin_now(c);
}

const struct lgp_config *lgp_config_get(void)
{
	pthread_once(&lgp_cfg_once, lgp_config_load);
	return &lgp_cfg;
}

struct fi_provider lgp_prov = {
	.version = FI_VERSION(0, 1),
	.fi_version = FI_VERSION(1, 17),
	.name = "ofi_hook_loggp",
	.getinfo = NULL,
	.fabric = lgp_fabric_hook,
	/* Runs before libfabric unloads us: no thread may outlive our code. */
	.cleanup = lgp_teardown,
};

FI_EXT_INI
{
	char help[512];
	int k;

	for (k = 0; k < LGP_KNOB_COUNT; k++) {
		snprintf(help, sizeof(help),
			 "LogGP %s added by the loggp shim: %s (also %s, which "
			 "wins); accepted: %s", lgp_knob_name(k),
			 lgp_knob_help(k), lgp_knob_env(k), lgp_knob_forms(k));
		fi_param_define(&lgp_prov, lgp_knob_name(k), FI_PARAM_STRING,
				"%s", help);
	}
	return &lgp_prov;
}

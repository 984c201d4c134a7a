/* SPDX-License-Identifier: MIT */
/*
 * Provider entry point and process-wide configuration.
 *
 * The provider has no getinfo, which is what makes libfabric register it
 * as a hook; FI_HOOK=loggp selects it.  Knobs come from LOGGP_<KNOB>; each
 * is also declared as a libfabric parameter (FI_OFI_HOOK_LOGGP_<KNOB>,
 * listed by `fi_info -e`) and read from there when LOGGP_<KNOB> is unset.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lgp/clock.h>

#include "lgp_config.h"
#include "lgp_fabric.h"
#include "lgp_log.h"
#include "lgp_teardown.h"

static struct lgp_config lgp_cfg;
static pthread_once_t lgp_cfg_once = PTHREAD_ONCE_INIT;

static const char *const lgp_param_names[LGP_KNOB_COUNT] = {
	[LGP_KNOB_OVERHEAD] = "overhead",
	[LGP_KNOB_SEND_OVERHEAD] = "send_overhead",
	[LGP_KNOB_RECV_OVERHEAD] = "recv_overhead",
	[LGP_KNOB_GAP] = "gap",
	[LGP_KNOB_LATENCY] = "latency",
	[LGP_KNOB_BULK_GAP] = "bulk_gap",
	[LGP_KNOB_BANDWIDTH] = "bandwidth",
};

/* LOGGP_<KNOB>, the environment variable of a knob. */
static void lgp_knob_envname(enum lgp_knob knob, char *envname, size_t len)
{
	size_t i;

	snprintf(envname, len, "LOGGP_%s", lgp_param_names[knob]);
	for (i = 0; envname[i]; i++)
		envname[i] = (char) (envname[i] >= 'a' && envname[i] <= 'z' ?
				     envname[i] - 'a' + 'A' : envname[i]);
}

static const char *lgp_knob_text(enum lgp_knob knob, char *envname, size_t len)
{
	const char *v;
	char *pv = NULL;

	lgp_knob_envname(knob, envname, len);
	v = getenv(envname);
	if (v)
		return v;
	if (fi_param_get_str(&lgp_prov, lgp_param_names[knob], &pv) == FI_SUCCESS)
		return pv;
	return NULL;
}

static void lgp_config_load(void)
{
	struct lgp_config *c = &lgp_cfg;
	const char *text, *sf, *pt;
	char envname[64], err[LGP_KNOB_ERRLEN];
	uint64_t v;
	int k, ret, have_bulk = 0;

	memset(c, 0, sizeof(*c));
	for (k = 0; k < LGP_KNOB_COUNT; k++) {
		text = lgp_knob_text(k, envname, sizeof(envname));
		if (!text)
			continue;
		ret = lgp_knob_parse(k, text, &v, err, sizeof(err));
		if (!ret && (k == LGP_KNOB_BULK_GAP || k == LGP_KNOB_BANDWIDTH) &&
		    have_bulk++) {
			snprintf(err, sizeof(err),
				 "bad value '%s' for LOGGP_%s: expected "
				 "LOGGP_BANDWIDTH or LOGGP_BULK_GAP, not both",
				 text, k == LGP_KNOB_BANDWIDTH ? "BANDWIDTH" : "BULK_GAP");
			ret = -EINVAL;
		}
		if (ret) {
			c->error = ret;
			snprintf(c->errmsg, sizeof(c->errmsg), "%s", err);
			return;
		}
		lgp_params_set(&c->params, k, v);
	}
	c->active = lgp_params_active(&c->params);
	pt = getenv("LOGGP_PROGRESS_THREAD");
	c->progress_idle = !pt || !strcmp(pt, "idle");
	if (pt && !c->progress_idle && strcmp(pt, "normal")) {
		c->error = -EINVAL;
		snprintf(c->errmsg, sizeof(c->errmsg),
			 "bad value '%.64s' for LOGGP_PROGRESS_THREAD: expected idle or normal",
			 pt);
		return;
	}
	sf = getenv("LOGGP_STATS_FILE");
	if (sf)
		snprintf(c->stats_file, sizeof(c->stats_file), "%s", sf);
	if (c->active)
		lgp_clock_init();
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
	char help[512], envname[64];
	int k;

	for (k = 0; k < LGP_KNOB_COUNT; k++) {
		lgp_knob_envname(k, envname, sizeof(envname));
		snprintf(help, sizeof(help),
			 "LogGP %s added by the loggp shim (also %s, which "
			 "wins); accepted: %s", lgp_param_names[k], envname,
			 lgp_knob_forms(k));
		fi_param_define(&lgp_prov, lgp_param_names[k], FI_PARAM_STRING,
				"%s", help);
	}
	return &lgp_prov;
}

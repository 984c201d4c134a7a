/* SPDX-License-Identifier: MIT */
/* The LOGGP_* environment: known names and settings' values (env.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lgp/env.h"
#include "lgp/knob.h"

#define ENV_PREFIX	"LOGGP_"
/* Longest name compared for the closest one; longer ones are cut. */
#define ENV_NAME_MAX	64

struct env_setting {
	const char *env;
	const char *choices;	/* accepted values separated by spaces, or "" */
};

static const struct env_setting env_settings[LGP_SETTING_COUNT] = {
#define LGP_SETTING(id, reader, choices, help) \
	[LGP_SETTING_##id] = { ENV_PREFIX #id, choices },
#include "lgp/knobs.def"
};

const char *lgp_setting_env(enum lgp_setting setting)
{
	return (unsigned int)setting < LGP_SETTING_COUNT ?
	       env_settings[setting].env : NULL;
}

/* Every known name: the knobs', then the settings'; NULL past the end. */
static const char *env_known(int i)
{
	if (i < LGP_KNOB_COUNT)
		return lgp_knob_env(i);
	return lgp_setting_env(i - LGP_KNOB_COUNT);
}

/* Length of the variable name of "NAME" or "NAME=value". */
static size_t env_name_len(const char *var)
{
	return strcspn(var, "=");
}

/*
 * Levenshtein distance of a[0..n) and b, ignoring case (LOGGP_latency is a
 * typo of LOGGP_LATENCY too), with n and strlen(b) cut.
 */
static size_t env_distance(const char *a, size_t n, const char *b)
{
	size_t row[ENV_NAME_MAX + 1], diag, up, i, j, m = strlen(b);

	if (n > ENV_NAME_MAX)
		n = ENV_NAME_MAX;
	if (m > ENV_NAME_MAX)
		m = ENV_NAME_MAX;
	for (j = 0; j <= m; j++)
		row[j] = j;
	for (i = 1; i <= n; i++) {
		diag = row[0];
		row[0] = i;
		for (j = 1; j <= m; j++) {
			up = row[j];
			row[j] = diag + (toupper((unsigned char)a[i - 1]) !=
				       toupper((unsigned char)b[j - 1]));
			if (up + 1 < row[j])
				row[j] = up + 1;
			if (row[j - 1] + 1 < row[j])
				row[j] = row[j - 1] + 1;
			diag = up;
		}
	}
	return row[m];
}

const char *lgp_env_closest(const char *var)
{
	size_t n = env_name_len(var), d, best_d = (size_t)-1;
	const char *name, *best = NULL;
	int i;

	for (i = 0; (name = env_known(i)); i++) {
		d = env_distance(var, n, name);
		if (d < best_d) {
			best_d = d;
			best = name;
		}
	}
	return best;
}

/* The known name var names exactly; -1 if none. */
static int env_lookup(const char *var)
{
	size_t n = env_name_len(var);
	const char *name;
	int i;

	for (i = 0; (name = env_known(i)); i++)
		if (strlen(name) == n && !strncmp(var, name, n))
			return i;
	return -1;
}

/* Nonzero if value is one of the space-separated words of choices. */
static int env_choice(const char *choices, const char *value)
{
	size_t n, vl = strlen(value);
	const char *s;

	for (s = choices; *s; s += n) {
		s += strspn(s, " ");
		n = strcspn(s, " ");
		if (n && n == vl && !strncmp(s, value, n))
			return 1;
	}
	return 0;
}

/* "a, b or c" from the choices "a b c". */
static void env_choices_text(char *dst, size_t len, const char *choices)
{
	const char *s = choices, *next;
	size_t n, used = 0;
	int k;

	dst[0] = '\0';
	while (*(s += strspn(s, " "))) {
		n = strcspn(s, " ");
		next = s + n + strspn(s + n, " ");
		k = snprintf(dst + used, len - used, "%s%.*s",
			     !used ? "" : *next ? ", " : " or ", (int)n, s);
		if (k < 0 || (size_t)k >= len - used)
			return;
		used += (size_t)k;
		s = next;
	}
}

static int env_bad_setting(const struct env_setting *st, const char *value,
			   char *err, size_t errlen)
{
	char echo[LGP_ECHO_MAX + 1], forms[128];

	lgp_echo(echo, sizeof(echo), value);
	env_choices_text(forms, sizeof(forms), st->choices);
	if (err && errlen)
		snprintf(err, errlen, "bad value '%s' for %s: expected %s",
			 echo, st->env, forms);
	return -EINVAL;
}

int lgp_env_check(char *const *envp, char *err, size_t errlen)
{
	char echo[LGP_ECHO_MAX + 1];
	const struct env_setting *st;
	const char *var, *eq;
	int i;

	if (err && errlen)
		err[0] = '\0';
	for (; envp && *envp; envp++) {
		var = *envp;
		if (strncmp(var, ENV_PREFIX, strlen(ENV_PREFIX)))
			continue;
		i = env_lookup(var);
		if (i < 0) {
			lgp_echo(echo, sizeof(echo), var);
			echo[env_name_len(echo)] = '\0';
			if (err && errlen)
				snprintf(err, errlen, "unknown variable %s: "
					 "did you mean %s?", echo,
					 lgp_env_closest(var));
			return -EINVAL;
		}
		if (i < LGP_KNOB_COUNT)
			continue;
		st = &env_settings[i - LGP_KNOB_COUNT];
		eq = strchr(var, '=');
		if (st->choices[0] && !env_choice(st->choices, eq ? eq + 1 : ""))
			return env_bad_setting(st, eq ? eq + 1 : "", err,
					       errlen);
	}
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * The LOGGP_* environment as a whole: every variable named LOGGP_* must be
 * a knob or a setting of the registry (lgp/knobs.def), and a setting with
 * a fixed set of values must hold one of them.  A typo is an error, never
 * a silently ignored knob:
 *   unknown variable LOGGP_LATENCCY: did you mean LOGGP_LATENCY?
 *   bad value 'hpet' for LOGGP_CLOCK: expected tsc or monotonic
 * (the shim prefixes "loggp: ").  Knob values themselves are read by
 * lgp_params_read() (lgp/knob.h).
 */
#ifndef LGP_ENV_H
#define LGP_ENV_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The non-knob variables (lgp/knobs.def, LGP_SETTING). */
enum lgp_setting {
#define LGP_SETTING(id, reader, choices, help) LGP_SETTING_##id,
#include "lgp/knobs.def"
	LGP_SETTING_COUNT
};

/* The setting's variable ("LOGGP_CLOCK"); NULL for an invalid setting. */
const char *lgp_setting_env(enum lgp_setting setting);

/*
 * The known LOGGP_* name (knob or setting) closest to the variable name
 * of the "NAME" or "NAME=value" string var, by edit distance; the first
 * in registry order on a tie.
 */
const char *lgp_env_closest(const char *var);

/*
 * Checks a NULL-terminated environment (environ, or "NAME=value" strings):
 * returns 0, or -EINVAL with one line in err for the first LOGGP_* name
 * that is not in the registry or setting with a value outside its choices.
 */
int lgp_env_check(char *const *envp, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif /* LGP_ENV_H */

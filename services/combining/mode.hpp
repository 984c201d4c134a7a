/*
 * mode.hpp: the four flat-combining modes of the global stack and queue, from
 * two switches (README.md, "Modes"): combining in each process (local) and
 * combining at the master (centralized).
 */
#pragma once

namespace comb {

enum class Mode { NONE, CENTRALIZED, LOCAL, FULL };

inline bool combines_locally(Mode m) { return m == Mode::LOCAL || m == Mode::FULL; }
inline bool combines_at_master(Mode m) { return m == Mode::CENTRALIZED || m == Mode::FULL; }

inline const char *mode_name(Mode m)
{
	switch (m) {
	case Mode::NONE: return "none";
	case Mode::CENTRALIZED: return "centralized";
	case Mode::LOCAL: return "local";
	case Mode::FULL: return "full";
	}
	return "?";
}

} // namespace comb

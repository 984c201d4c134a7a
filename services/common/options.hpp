/*
 * options.hpp: what the services' programs read from people the same way.
 */
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "error.hpp"

namespace svc {

/* The value of --opt, an integer from min to max; anything else throws
 * Error(EINVAL) naming the option and the range. */
inline uint64_t option_number(const char *opt, const char *arg, uint64_t min, uint64_t max)
{
	char *end;
	errno = 0;
	unsigned long long v = std::strtoull(arg, &end, 10);
	if (errno || end == arg || *end || *arg == '-' || v < min || v > max)
		throw Error(EINVAL, std::string("bad value '") + arg + "' for --" + opt +
					    ": expected an integer from " + std::to_string(min) +
					    " to " + std::to_string(max));
	return v;
}

/* The libfabric provider unless one is given: $LOGGP_PROVIDER, else tcp;ofi_rxm
 * (the experiment's provider, docs/design.md). */
inline std::string default_provider()
{
	const char *p = std::getenv("LOGGP_PROVIDER");
	return p && *p ? p : "tcp;ofi_rxm";
}

} // namespace svc

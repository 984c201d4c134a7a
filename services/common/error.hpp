/*
 * error.hpp: the one exception type of the services (services/common).
 *
 * Every failure is thrown as svc::Error carrying an errno value, so a
 * server can forward it in a response unchanged and a C API can return it
 * as a negative errno.  what() is one line naming what is wrong and what is
 * accepted.  Each service names it in its own namespace (kvs::Error,
 * pfs::Error are this type).
 */
#pragma once

#include <stdexcept>
#include <string>

namespace svc {

class Error : public std::runtime_error {
public:
	Error(int errnum, const std::string &what) : std::runtime_error(what), errnum_(errnum) {}
	int errnum() const noexcept { return errnum_; }

private:
	int errnum_;
};

} // namespace svc

/*
 * error.hpp: the PFS's exception type, svc::Error under the PFS's name.
 * Errno values mean what they mean for POSIX files (ENOENT, EEXIST,
 * ENOTDIR, EISDIR, ENOTEMPTY, ENOSPC, EINVAL); EIO is a server that did not
 * answer or failed, and its message names the server.
 */
#pragma once

#include "common/error.hpp"

namespace pfs {

using Error = svc::Error;

} // namespace pfs

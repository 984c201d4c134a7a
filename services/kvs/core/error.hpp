// error.hpp - the one exception type of the KVS, svc::Error
// (services/common/error.hpp) under the KVS's name.
//
// Every failure of loggp_kvs_core is thrown as kvs::Error, carrying an errno
// value so the networked layer can forward it in a response unchanged:
//   ENOENT  missing key or object        EINVAL  bad key or argument
//   EFBIG   value over the size limit    EPROTO  corrupt object, digest mismatch
//   ENOTDIR a path component is a value  EISDIR  a directory where a value is expected
//   EIO     SQLite failure (the message carries sqlite3_errmsg)
// what() is one line naming what is wrong and what is accepted.
#pragma once

#include "common/error.hpp"

namespace kvs {

using Error = svc::Error;

} // namespace kvs

// error.cpp - kvs::Error (see error.hpp).
#include "error.hpp"

namespace kvs {

Error::Error(int errnum, const std::string& what) : std::runtime_error(what), errnum_(errnum) {}

} // namespace kvs

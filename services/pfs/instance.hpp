/*
 * instance.hpp: the files by which an instance's servers and clients find
 * each other, all in the instance directory DIR:
 *
 *   DIR/server-I/        server I's objects (and on server 0, meta.db)
 *   DIR/server-I/lock    held (flock) by the running server I
 *   DIR/server-I.addr    server I's libfabric endpoint address, in hex
 *
 * A server writes its .addr file once its endpoint is up (atomically: a
 * temporary file renamed) and removes it when it stops; a client reads it
 * at every (re)connect, so a restarted server's new address is found.
 * Errors: pfs::Error naming the file.
 */
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace pfs {

std::string server_dir(const std::string &instance, uint32_t index);
std::string addr_path(const std::string &instance, uint32_t index);
void addr_publish(const std::string &instance, uint32_t index, const std::string &addr);
/* The address, or nothing when the file is missing or malformed. */
std::optional<std::string> addr_read(const std::string &instance, uint32_t index);

} // namespace pfs

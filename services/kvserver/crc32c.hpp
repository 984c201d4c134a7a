/*
 * crc32c.hpp: CRC-32C (Castagnoli), the checksum of a log record (wal.hpp):
 * with the SSE 4.2 instruction where the CPU has it, a table otherwise.
 * crc32c("123456789") is 0xe3069283.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kvsrv {

/* Continues crc (0 to start) over data. */
uint32_t crc32c(std::string_view data, uint32_t crc = 0);

} // namespace kvsrv

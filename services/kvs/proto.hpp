/*
 * proto.hpp: the messages brokers exchange, and their binary encoding.
 *
 * Every message starts with a header (type, sender rank); the body depends
 * on the type.  Integers are little-endian, strings are a u32 length then
 * the bytes.  decode() throws kvs::Error(EPROTO) naming what is truncated
 * or unknown, so a corrupt frame never reaches the protocol code.
 *
 * Directions in the tree overlay (rank 0 is the root, parent (r-1)/k):
 *   FENCE      child -> parent   a fence batch (txn.hpp), merged on the way up
 *   SETROOT    parent -> child   a new root: version, ref, the root directory
 *                                object, and the names of the fences it ends
 *   FENCE_ERR  parent -> child   a fence the root could not apply
 *   LOAD       child -> parent   fault-in request for one object
 *   LOAD_REPLY parent -> child   the object, or why it cannot be had
 */
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvs {

enum class MsgType : uint8_t {
	FENCE = 1,
	SETROOT = 2,
	FENCE_ERR = 3,
	LOAD = 4,
	LOAD_REPLY = 5,
};

const char *msg_type_name(MsgType t) noexcept;

struct Msg {
	MsgType type = MsgType::FENCE;
	uint32_t src = 0;		/* sender's rank */
	/* FENCE: the encoded FenceBatch (batch_encode) */
	std::string batch;
	/* SETROOT */
	uint64_t version = 0;
	std::string root_ref;
	std::string root_obj;		/* the root directory object itself */
	std::vector<std::string> names;	/* fences this root completes */
	/* FENCE_ERR: names[0] is the fence; LOAD_REPLY: errnum 0 = found */
	int32_t errnum = 0;
	std::string error;
	/* LOAD, LOAD_REPLY */
	std::string ref;
	std::string data;
};

std::string msg_encode(const Msg &m);
Msg msg_decode(std::string_view bytes);

} // namespace kvs

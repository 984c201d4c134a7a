// blobref.cpp - SHA-1 blobrefs through OpenSSL's EVP interface.
#include "blobref.hpp"

#include "error.hpp"

#include <openssl/evp.h>

#include <cerrno>

namespace kvs {

std::string blobref_hash(std::string_view data)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;

	if (!EVP_Digest(data.data(), data.size(), md, &len, EVP_sha1(), nullptr) || len != 20)
		throw Error(EIO, "SHA-1 digest failed in OpenSSL (EVP_Digest with EVP_sha1)");

	static constexpr char hex[] = "0123456789abcdef";
	std::string ref(blobref_prefix);
	ref.reserve(blobref_len);
	for (unsigned int i = 0; i < len; i++) {
		ref.push_back(hex[md[i] >> 4]);
		ref.push_back(hex[md[i] & 0xf]);
	}
	return ref;
}

bool blobref_valid(std::string_view ref) noexcept
{
	if (ref.size() != blobref_len || !ref.starts_with(blobref_prefix))
		return false;
	for (char c : ref.substr(blobref_prefix.size())) {
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
	}
	return true;
}

} // namespace kvs

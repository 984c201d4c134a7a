/* The test name of a case parameterised by a libfabric provider: "tcp;ofi_rxm" becomes
 * tcp_ofi_rxm, since gtest accepts only letters, digits and '_' in names. */
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <string>

inline std::string provider_name(const ::testing::TestParamInfo<const char *> &p)
{
	std::string n = p.param;
	for (auto &c : n)
		if (!isalnum(static_cast<unsigned char>(c)))
			c = '_';
	return n;
}

/* SPDX-License-Identifier: MIT */
/*
 * A parser for the one shape of JSON the control socket accepts: one
 * flat object whose values are strings, numbers, true, false or null,
 * e.g. {"cmd":"set","port":1,"latency":"1ms"}.  Nested objects/arrays,
 * duplicate keys, trailing garbage and over-long keys or values are
 * errors.  Strings are decoded (escapes, \uXXXX for ASCII only); numbers
 * keep their source text so the caller decides integer or real.
 */
#ifndef WIRE_JSON_H
#define WIRE_JSON_H

#include <stddef.h>

#define WIRE_JSON_MAX_MEMBERS	24
#define WIRE_JSON_MAX_KEY	32
#define WIRE_JSON_MAX_TEXT	128

enum wire_json_type {
	WIRE_JSON_STRING,
	WIRE_JSON_NUMBER,
	WIRE_JSON_TRUE,
	WIRE_JSON_FALSE,
	WIRE_JSON_NULL,
};

struct wire_json_member {
	char key[WIRE_JSON_MAX_KEY];
	enum wire_json_type type;
	char text[WIRE_JSON_MAX_TEXT];
};

struct wire_json_obj {
	unsigned int n;
	struct wire_json_member m[WIRE_JSON_MAX_MEMBERS];
};

/*
 * Parse len bytes of text.  Returns 0, or -EINVAL with one line in err
 * saying what is wrong and at which byte.
 */
int wire_json_parse(const char *text, size_t len, struct wire_json_obj *o,
		    char *err, size_t errlen);

/* Member by key, or NULL. */
const struct wire_json_member *wire_json_get(const struct wire_json_obj *o,
					     const char *key);

const char *wire_json_type_name(enum wire_json_type t);

#endif /* WIRE_JSON_H */

/* SPDX-License-Identifier: MIT */
/* Flat JSON object parser for control requests (see wire_json.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "wire_json.h"

struct wire_json_cur {
	const char *s;
	size_t len;
	size_t pos;
	char *err;
	size_t errlen;
};

static int wire_json_fail(struct wire_json_cur *c, const char *what)
{
	if (c->err)
		snprintf(c->err, c->errlen,
			 "request is not a flat JSON object: %s at byte %zu",
			 what, c->pos);
	return -EINVAL;
}

static void wire_json_ws(struct wire_json_cur *c)
{
	while (c->pos < c->len &&
	       (c->s[c->pos] == ' ' || c->s[c->pos] == '\t' ||
		c->s[c->pos] == '\r' || c->s[c->pos] == '\n'))
		c->pos++;
}

static int wire_json_peek(struct wire_json_cur *c)
{
	return c->pos < c->len ? (unsigned char)c->s[c->pos] : -1;
}

static int wire_json_hex(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* A string literal into out (size cap); the cursor is on the quote. */
static int wire_json_string(struct wire_json_cur *c, char *out, size_t cap,
			    const char *toolong)
{
	size_t n = 0;
	int ch, i, h, u;

	c->pos++;
	for (;;) {
		ch = wire_json_peek(c);
		if (ch < 0)
			return wire_json_fail(c, "unterminated string");
		if (ch < 0x20)
			return wire_json_fail(c, "control character in string");
		c->pos++;
		if (ch == '"')
			break;
		if (ch == '\\') {
			ch = wire_json_peek(c);
			c->pos++;
			switch (ch) {
			case '"': case '\\': case '/':
				break;
			case 'b': ch = '\b'; break;
			case 'f': ch = '\f'; break;
			case 'n': ch = '\n'; break;
			case 'r': ch = '\r'; break;
			case 't': ch = '\t'; break;
			case 'u':
				for (u = 0, i = 0; i < 4; i++) {
					h = wire_json_hex(wire_json_peek(c));
					if (h < 0)
						return wire_json_fail(c,
							"bad \\u escape");
					u = u * 16 + h;
					c->pos++;
				}
				if (u == 0 || u > 0x7f)
					return wire_json_fail(c,
						"\\u escape outside ASCII");
				ch = u;
				break;
			default:
				c->pos--;
				return wire_json_fail(c, "bad escape");
			}
		}
		if (n + 1 >= cap)
			return wire_json_fail(c, toolong);
		out[n++] = (char)ch;
	}
	out[n] = '\0';
	return 0;
}

/* A JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static int wire_json_number(struct wire_json_cur *c, char *out, size_t cap)
{
	size_t start = c->pos, n;

	if (wire_json_peek(c) == '-')
		c->pos++;
	if (wire_json_peek(c) == '0') {
		c->pos++;
	} else if (wire_json_peek(c) >= '1' && wire_json_peek(c) <= '9') {
		while (isdigit(wire_json_peek(c)))
			c->pos++;
	} else {
		return wire_json_fail(c, "bad number");
	}
	if (wire_json_peek(c) == '.') {
		c->pos++;
		if (!isdigit(wire_json_peek(c)))
			return wire_json_fail(c, "bad number");
		while (isdigit(wire_json_peek(c)))
			c->pos++;
	}
	if (wire_json_peek(c) == 'e' || wire_json_peek(c) == 'E') {
		c->pos++;
		if (wire_json_peek(c) == '+' || wire_json_peek(c) == '-')
			c->pos++;
		if (!isdigit(wire_json_peek(c)))
			return wire_json_fail(c, "bad number");
		while (isdigit(wire_json_peek(c)))
			c->pos++;
	}
	n = c->pos - start;
	if (n >= cap)
		return wire_json_fail(c, "number too long");
	memcpy(out, c->s + start, n);
	out[n] = '\0';
	return 0;
}

static int wire_json_word(struct wire_json_cur *c, const char *w)
{
	size_t n = strlen(w);

	if (c->len - c->pos < n || memcmp(c->s + c->pos, w, n))
		return wire_json_fail(c, "unexpected character");
	c->pos += n;
	return 0;
}

static int wire_json_value(struct wire_json_cur *c, struct wire_json_member *m)
{
	int ch = wire_json_peek(c);

	switch (ch) {
	case '"':
		m->type = WIRE_JSON_STRING;
		return wire_json_string(c, m->text, sizeof(m->text),
					"string value too long");
	case 't':
		m->type = WIRE_JSON_TRUE;
		return wire_json_word(c, "true");
	case 'f':
		m->type = WIRE_JSON_FALSE;
		return wire_json_word(c, "false");
	case 'n':
		m->type = WIRE_JSON_NULL;
		return wire_json_word(c, "null");
	case '{':
	case '[':
		return wire_json_fail(c, "nested objects and arrays are not "
				      "accepted");
	default:
		m->type = WIRE_JSON_NUMBER;
		return wire_json_number(c, m->text, sizeof(m->text));
	}
}

int wire_json_parse(const char *text, size_t len, struct wire_json_obj *o,
		    char *err, size_t errlen)
{
	struct wire_json_cur c = { text, len, 0, err, errlen };
	struct wire_json_member *m;
	int rc;

	o->n = 0;
	wire_json_ws(&c);
	if (wire_json_peek(&c) != '{')
		return wire_json_fail(&c, "expected '{'");
	c.pos++;
	wire_json_ws(&c);
	if (wire_json_peek(&c) == '}') {
		c.pos++;
		goto end;
	}
	for (;;) {
		wire_json_ws(&c);
		if (wire_json_peek(&c) != '"')
			return wire_json_fail(&c, "expected a key string");
		if (o->n == WIRE_JSON_MAX_MEMBERS)
			return wire_json_fail(&c, "too many keys");
		m = &o->m[o->n];
		rc = wire_json_string(&c, m->key, sizeof(m->key),
				      "key too long");
		if (rc)
			return rc;
		if (wire_json_get(o, m->key))
			return wire_json_fail(&c, "duplicate key");
		wire_json_ws(&c);
		if (wire_json_peek(&c) != ':')
			return wire_json_fail(&c, "expected ':'");
		c.pos++;
		wire_json_ws(&c);
		rc = wire_json_value(&c, m);
		if (rc)
			return rc;
		o->n++;
		wire_json_ws(&c);
		if (wire_json_peek(&c) == ',') {
			c.pos++;
			continue;
		}
		if (wire_json_peek(&c) == '}') {
			c.pos++;
			break;
		}
		return wire_json_fail(&c, "expected ',' or '}'");
	}
end:
	wire_json_ws(&c);
	if (c.pos != c.len)
		return wire_json_fail(&c, "trailing characters");
	if (err && errlen)
		err[0] = '\0';
	return 0;
}

const struct wire_json_member *wire_json_get(const struct wire_json_obj *o,
					     const char *key)
{
	unsigned int i;

	for (i = 0; i < o->n; i++)
		if (!strcmp(o->m[i].key, key))
			return &o->m[i];
	return NULL;
}

const char *wire_json_type_name(enum wire_json_type t)
{
	switch (t) {
	case WIRE_JSON_STRING: return "a string";
	case WIRE_JSON_NUMBER: return "a number";
	case WIRE_JSON_TRUE:
	case WIRE_JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

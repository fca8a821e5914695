// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * values.c - one definition value from its text: names, addresses,
 * prefixes, public keys and endpoints. Each parser reports a bad value with
 * its JSON path, the value quoted and what to write instead, and leaves the
 * model field zeroed (see definition/config_priv.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "definition/config.h"
#include "definition/config_priv.h"

static bool is_lower_digit(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
}

static bool is_alnum(char ch)
{
	return is_lower_digit(ch) || (ch >= 'A' && ch <= 'Z');
}

const char *config_quote(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	/* room for the quotes, "..." and NUL */
	if (len < 8) {
		if (len)
			buf[0] = '\0';
		return buf;
	}
	buf[o++] = '"';
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		char tmp[8];
		size_t n = 1;

		/* escape what could forge output or drive a terminal */
		if (ch == '"' || ch == '\\')
			n = (size_t)snprintf(tmp, sizeof(tmp), "\\%c", ch);
		else if (ch < 0x20 || ch >= 0x7f)
			n = (size_t)snprintf(tmp, sizeof(tmp), "\\x%02x", ch);
		else
			tmp[0] = (char)ch;
		if (o + n + 5 > len) {
			memcpy(buf + o, "\"...", 5);
			return buf;
		}
		memcpy(buf + o, tmp, n);
		o += n;
	}
	buf[o++] = '"';
	buf[o] = '\0';
	return buf;
}

void config_path(char *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, CONFIG_PATH_LEN, fmt, ap);
	va_end(ap);
}

void config_error(struct config_report *r, const char *path, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->errors++;
	diag_add(r->d, path, "%s", msg);
}

/*
 * Names are [a-z0-9][a-z0-9-]*. The name is stored even when its pattern is
 * wrong, so zone members still resolve and one mistake gives one error.
 */
void config_parse_name(struct config_report *r, const char *path, const char *s, size_t max,
		       const char *kind, char *out)
{
	char q[CONFIG_VALUE_LEN];
	size_t len = strlen(s);
	bool ok = len > 0 && is_lower_digit(s[0]);

	for (size_t i = 1; ok && i < len; i++)
		ok = is_lower_digit(s[i]) || s[i] == '-';
	config_quote(s, q, sizeof(q));
	if (len > max) {
		config_error(r, path, "%s is %zu bytes; %s names are at most %zu bytes%s", q, len,
			     kind, max,
			     max == FABRICD_IFNAME_MAX
				 ? " (a vnet name is its bridge's name, and Linux interface "
				   "names are at most 15 bytes)"
				 : "");
		return;
	}
	if (!ok)
		config_error(r, path,
			     "%s is not a valid %s name; use lower-case letters a-z, digits and "
			     "'-', starting with a letter or digit",
			     q, kind);
	memcpy(out, s, len + 1);
}

void config_parse_addr(struct config_report *r, const char *path, const char *s,
		       struct ip_addr *out)
{
	char q[CONFIG_VALUE_LEN], bare[CONFIG_VALUE_LEN], qb[CONFIG_VALUE_LEN];
	const char *slash = strchr(s, '/');

	if (ip_addr_parse(s, out) == 0 && !ip_addr_is_v4mapped(out))
		return;
	config_quote(s, q, sizeof(q));
	if (out->family == AF_INET6) {
		/* ::ffff:a.b.c.d: the kernel's sockets take it as IPv4; said as what it is */
		snprintf(bare, sizeof(bare), "%u.%u.%u.%u", out->bytes[12], out->bytes[13],
			 out->bytes[14], out->bytes[15]);
		memset(out, 0, sizeof(*out));
		config_error(r, path, "%s is an IPv4-mapped IPv6 address; give the IPv4 address %s",
			     q, config_quote(bare, qb, sizeof(qb)));
		return;
	}
	memset(out, 0, sizeof(*out));
	if (slash && (size_t)(slash - s) < sizeof(bare)) {
		memcpy(bare, s, (size_t)(slash - s));
		bare[slash - s] = '\0';
		config_error(r, path, "%s is a prefix; give the address alone, e.g. %s", q,
			     config_quote(bare, qb, sizeof(qb)));
		return;
	}
	config_error(r, path,
		     "%s is not an IP address; give an IPv4 or IPv6 literal (host names are "
		     "not resolved here)",
		     q);
}

void config_parse_prefix(struct config_report *r, const char *path, const char *s,
			 struct ip_prefix *out)
{
	char q[CONFIG_VALUE_LEN], bare[IP_ADDR_STRLEN + 1], net[IP_ADDR_STRLEN];
	const char *slash = strchr(s, '/');
	struct ip_addr a;
	char *end;
	unsigned long len;

	if (ip_prefix_parse(s, out) == 0)
		return;
	/* ip_prefix_parse may leave the address behind when the host bits are wrong */
	memset(out, 0, sizeof(*out));
	config_quote(s, q, sizeof(q));
	if (!slash && ip_addr_parse(s, &a) == 0) {
		config_error(r, path, "%s has no prefix length; write it as \"%s/%u\" or similar",
			     q, s, a.family == AF_INET ? 24U : 64U);
		return;
	}
	if (slash && (size_t)(slash - s) < sizeof(bare)) {
		memcpy(bare, s, (size_t)(slash - s));
		bare[slash - s] = '\0';
		len = strtoul(slash + 1, &end, 10);
		if (slash[1] >= '0' && slash[1] <= '9' && !*end && ip_addr_parse(bare, &a) == 0 &&
		    len <= ip_addr_host_len(&a)) {
			struct ip_prefix given = {a, (uint8_t)len};

			/* the length is fine, so host bits are set: name the network */
			a = ip_prefix_network(&given).addr;
			config_error(r, path,
				     "%s has host bits set; give the network address, \"%s/%lu\"",
				     q, ip_addr_str(&a, net, sizeof(net)), len);
			return;
		}
	}
	config_error(r, path,
		     "%s is not an IP prefix; give an IPv4 or IPv6 network such as "
		     "\"10.255.0.0/24\" or \"fd00:255::/64\"",
		     q);
}

/* Base64 of exactly 32 bytes: 44 characters with one '=' of padding. */
void config_parse_key(struct config_report *r, const char *path, const char *s,
		      uint8_t out[WG_KEY_LEN])
{
	char q[CONFIG_VALUE_LEN];
	uint8_t key[WG_KEY_LEN + 1];
	size_t bin_len = 0;
	const char *end = NULL;
	uint8_t any = 0;

	config_quote(s, q, sizeof(q));
	if (strlen(s) != 44 ||
	    sodium_base642bin(key, sizeof(key), s, 44, NULL, &bin_len, &end,
			      sodium_base64_VARIANT_ORIGINAL) != 0 ||
	    bin_len != WG_KEY_LEN || end != s + 44) {
		config_error(r, path,
			     "%s is not a WireGuard public key (base64 of 32 bytes, 44 characters "
			     "ending in '='); give the output of \"wg pubkey\" for the node's key",
			     q);
		return;
	}
	for (size_t i = 0; i < WG_KEY_LEN; i++)
		any |= key[i];
	if (!any) {
		config_error(r, path,
			     "%s is the all-zero key, which no peer can use; give the node's "
			     "real public key",
			     q);
		return;
	}
	memcpy(out, key, WG_KEY_LEN);
}

/*
 * Host name syntax only (RFC 1123 labels); it is resolved where it is used.
 * An all-numeric last label is a mistyped IPv4 address, not a name.
 */
bool hostname_valid(const char *s)
{
	size_t len = strlen(s);
	const char *label = s;
	bool numeric = true, last_numeric = true;

	if (len && s[len - 1] == '.')
		len--;
	if (len == 0 || len > FABRICD_HOST_MAX)
		return false;
	for (size_t i = 0; i <= len; i++) {
		char ch = i < len ? s[i] : '.';

		if (ch == '.') {
			size_t n = (size_t)(s + i - label);

			if (n == 0 || n > 63 || label[0] == '-' || s[i - 1] == '-')
				return false;
			last_numeric = numeric;
			numeric = true;
			label = s + i + 1;
			continue;
		}
		if (!is_alnum(ch) && ch != '-')
			return false;
		if (ch < '0' || ch > '9')
			numeric = false;
	}
	return !last_numeric;
}

void config_parse_endpoint(struct config_report *r, const char *path, const char *s, struct node *n)
{
	char q[CONFIG_VALUE_LEN], host[FABRICD_HOST_MAX + 1];
	struct ip_addr a;
	uint16_t port;

	config_quote(s, q, sizeof(q));
	if (endpoint_split(s, host, sizeof(host), &port) < 0) {
		config_error(r, path,
			     "%s is not \"host:port\" or \"[IPv6]:port\" with a port 1..65535; "
			     "e.g. \"203.0.113.5:51820\" or \"[2001:db8::5]:51820\"",
			     q);
		return;
	}
	if (s[0] == '[') {
		if (strchr(host, '%')) {
			config_error(r, path,
				     "%s: a scoped IPv6 address (%%interface) is link-local, which "
				     "cannot reach another node's WireGuard; give a global address",
				     q);
			return;
		}
		if (ip_addr_parse(host, &a) < 0 || a.family != AF_INET6) {
			config_error(r, path,
				     "%s: only an IPv6 address goes in brackets; write an IPv4 "
				     "address or host name without them",
				     q);
			return;
		}
		if (ip_addr_is_v4mapped(&a)) {
			/* as for underlay: WireGuard and the guard take it as the IPv4 one */
			config_error(r, path,
				     "%s is an IPv4-mapped IPv6 address; write the IPv4 address: "
				     "\"%u.%u.%u.%u:%u\"",
				     q, a.bytes[12], a.bytes[13], a.bytes[14], a.bytes[15], port);
			return;
		}
	} else if (ip_addr_parse(host, &a) < 0 && !hostname_valid(host)) {
		config_error(r, path,
			     "%s: the host is neither an IP address nor a valid DNS name (letters, "
			     "digits and '-' in dot-separated labels)",
			     q);
		return;
	}
	memcpy(n->endpoint_host, host, strlen(host) + 1);
	n->endpoint_port = port;
	n->flags |= NODE_HAS_ENDPOINT;
}

bool config_json_int(const json_t *v, long long *out)
{
	double d = json_real_value(v);

	if (json_is_integer(v)) {
		*out = json_integer_value(v);
		return true;
	}
	if (!json_is_real(v))
		return false;
	/* past long long: still a whole number, out of any range the caller checks */
	if (d >= 9.2e18 || d <= -9.2e18) {
		*out = d > 0 ? LLONG_MAX : LLONG_MIN;
		return true;
	}
	*out = (long long)d;
	return (double)*out == d;
}

/* One open object or array while json_path_at scans: its key, or its element index. */
struct json_frame {
	bool object, want_key, cut; /* cut: its key did not fit */
	unsigned int index;
	char key[64];
};

/* Past the string that starts at text[i] (a '"'); its raw text into k's key when k. */
static size_t json_skip_string(const char *text, size_t i, size_t end, struct json_frame *k)
{
	size_t o = 0;

	if (k)
		k->cut = false;
	for (i++; i < end && text[i] != '"'; i++) {
		if (text[i] == '\\' && i + 1 < end)
			i++;
		if (k && o + 1 < sizeof(k->key))
			k->key[o++] = text[i];
		else if (k)
			k->cut = true;
	}
	if (k)
		k->key[o] = '\0';
	return i;
}

/* Appends each frame's part ("zones", "[0]", ".vnets") to out; false when it did not fit. */
static bool json_path_format(const struct json_frame *f, unsigned int depth, char *out, size_t len)
{
	size_t o = 0;

	out[0] = '\0';
	for (unsigned int k = 0; k < depth && o < len; k++) {
		if (f[k].object && f[k].cut)
			return false;
		if (f[k].object)
			o += snprintf(out + o, len - o, "%s%s", o ? "." : "", f[k].key);
		else
			o += snprintf(out + o, len - o, "[%u]", f[k].index);
	}
	return o < len;
}

/*
 * The JSON path of the key that ends before byte offset of text (where jansson
 * stops at a duplicate key), from the brackets, commas and keys before it;
 * "(top level)" when it cannot tell; "(path too deep)" past JSON_FRAMES levels
 * (jansson takes 2048), "(path too long)" when it or one of its keys does not fit: a
 * wrong path would send the reader to another key (until 2026-12-07 a key
 * after 33 nested brackets was named at the wrong level).
 */
#define JSON_FRAMES 32
static void json_path_at(const char *text, size_t len, size_t offset, char *out, size_t out_len)
{
	struct json_frame f[JSON_FRAMES];
	unsigned int depth = 0; /* levels open; frames only for the first JSON_FRAMES */
	size_t end = offset < len ? offset : len;

	for (size_t i = 0; i < end; i++) {
		struct json_frame *top = depth && depth <= JSON_FRAMES ? &f[depth - 1] : NULL;
		char ch = text[i];

		if (ch == '{' || ch == '[') {
			if (depth < JSON_FRAMES)
				f[depth] =
				    (struct json_frame){.object = ch == '{', .want_key = true};
			depth++;
		} else if ((ch == '}' || ch == ']') && depth)
			depth--;
		else if (ch == ',' && top && top->object)
			top->want_key = true;
		else if (ch == ',' && top)
			top->index++;
		else if (ch == ':' && top)
			top->want_key = false;
		else if (ch == '"')
			i = json_skip_string(text, i, end,
					     top && top->object && top->want_key ? top : NULL);
	}
	if (depth > JSON_FRAMES)
		snprintf(out, out_len, "(path too deep)");
	else if (!json_path_format(f, depth, out, out_len))
		snprintf(out, out_len, "(path too long)");
	else if (!out[0])
		snprintf(out, out_len, "(top level)");
}

/* Why text (named source) did not parse, into d, ending with todo. */
static void json_error_say(struct diag *d, const char *source, const char *text, size_t len,
			   const json_error_t *jerr, const char *todo)
{
	char where[CONFIG_PATH_LEN];

	if (!strncmp(jerr->text, "duplicate object key", 20) && jerr->position > 0) {
		json_path_at(text, len, (size_t)jerr->position, where, sizeof(where));
		diag_add(d, where, "appears twice in one object (%s line %d); %s", source,
			 jerr->line, todo ? todo : "keep one");
		return;
	}
	config_path(where, "%s:%d:%d", source, jerr->line, jerr->column);
	diag_add(d, where, "invalid JSON: %s; %s", jerr->text,
		 todo ? todo : "fix the syntax at this line and column");
}

void config_syntax_error(struct config_report *r, const char *source, const char *text, size_t len,
			 const json_error_t *jerr)
{
	r->errors++;
	json_error_say(r->d, source, text, len, jerr, NULL);
}

int config_json_check(const char *text, size_t len, const char *source, const char *todo,
		      struct diag *d)
{
	json_error_t jerr;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);

	if (root) {
		json_decref(root);
		return 0;
	}
	json_error_say(d, source, text, len, &jerr, todo);
	return -EINVAL;
}

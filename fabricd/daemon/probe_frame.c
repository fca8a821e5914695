// SPDX-License-Identifier: GPL-2.0-or-later
/* daemon/probe_frame.c - the probe payload, see probe_frame.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "daemon/probe_frame.h"

#define NAME_FIELD 64
#define VERSION	   1

static const uint8_t magic[4] = {'F', 'D', 'P', 'B'};

static void put_name(uint8_t *at, const char *name)
{
	size_t n = strnlen(name, NAME_FIELD - 1);

	memset(at, 0, NAME_FIELD);
	memcpy(at, name, n);
}

/* A NUL-terminated field of printable ASCII: anything else is not ours. */
static int get_name(const uint8_t *at, char *out)
{
	size_t n = strnlen((const char *)at, NAME_FIELD);

	if (n == NAME_FIELD)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		char c = (char)at[i];

		if (c <= ' ' || c > '~')
			return -EINVAL;
	}
	memcpy(out, at, n);
	out[n] = '\0';
	return 0;
}

size_t probe_frame_encode(const struct probe_frame *f, uint8_t *buf, size_t len)
{
	uint16_t size = htons(f->size);
	uint32_t seq = htonl(f->seq), nonce = htonl(f->nonce);

	if (f->size < PROBE_HEADER_LEN || len < f->size)
		return 0;
	memset(buf, 0, f->size);
	memcpy(buf, magic, sizeof(magic));
	buf[4] = VERSION;
	buf[5] = (uint8_t)f->type;
	memcpy(buf + 6, &size, 2);
	memcpy(buf + 8, &seq, 4);
	memcpy(buf + 12, &nonce, 4);
	put_name(buf + 16, f->cluster);
	put_name(buf + 16 + NAME_FIELD, f->sender);
	put_name(buf + 16 + 2 * NAME_FIELD, f->target);
	return f->size;
}

int probe_frame_decode(const uint8_t *buf, size_t len, struct probe_frame *f)
{
	uint16_t size;

	if (len < PROBE_HEADER_LEN || memcmp(buf, magic, sizeof(magic)) || buf[4] != VERSION ||
	    (buf[5] != PROBE_REQUEST && buf[5] != PROBE_REPLY))
		return -EINVAL;
	memcpy(&size, buf + 6, 2);
	f->size = ntohs(size);
	/* Ethernet pads short frames, so len may exceed size; less is a truncated frame */
	if (f->size < PROBE_HEADER_LEN || f->size > len)
		return -EINVAL;
	f->type = (enum probe_type)buf[5];
	memcpy(&f->seq, buf + 8, 4);
	f->seq = ntohl(f->seq);
	memcpy(&f->nonce, buf + 12, 4);
	f->nonce = ntohl(f->nonce);
	if (get_name(buf + 16, f->cluster) < 0 || get_name(buf + 16 + NAME_FIELD, f->sender) < 0 ||
	    get_name(buf + 16 + 2 * NAME_FIELD, f->target) < 0)
		return -EINVAL;
	return 0;
}

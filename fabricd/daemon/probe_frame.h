/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * daemon/probe_frame.h - the data-path probe's Ethernet payload (ethertype
 * 0x88B5, IEEE "local experimental"): a request that every fabricd daemon of
 * the same cluster on the vnet answers with a reply of the same size, so both
 * directions carry the size probed. Pure encoding, no I/O.
 *
 *   0  "FDPB"  magic
 *   4  u8      version (1)
 *   5  u8      type: 1 request, 2 reply
 *   6  u16     size of the whole payload (network order)
 *   8  u32     sequence number (network order)
 *  12  u32     nonce of the sender's run (network order), echoed in replies
 *  16  char[64] cluster, NUL padded
 *  80  char[64] sender node
 * 144  char[64] target node, "" = every node
 * 208  zero padding up to size
 */
#ifndef FABRICD_DAEMON_PROBE_FRAME_H
#define FABRICD_DAEMON_PROBE_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "definition/model.h"

#define PROBE_ETHERTYPE	 0x88B5
#define PROBE_HEADER_LEN 208
#define PROBE_MAX_LEN	 65535

enum probe_type { PROBE_REQUEST = 1, PROBE_REPLY = 2 };

struct probe_frame {
	enum probe_type type;
	uint16_t size;
	uint32_t seq, nonce;
	char cluster[FABRICD_NAME_MAX + 1];
	char sender[FABRICD_NAME_MAX + 1];
	char target[FABRICD_NAME_MAX + 1];
};

/*
 * Writes f into buf (len >= f->size >= PROBE_HEADER_LEN, zero padded).
 * Returns f->size, or 0 when it does not fit.
 */
size_t probe_frame_encode(const struct probe_frame *f, uint8_t *buf, size_t len);
/* Parses a received payload; 0, or -EINVAL when it is not a probe (or truncated). */
int probe_frame_decode(const uint8_t *buf, size_t len, struct probe_frame *f);

#endif

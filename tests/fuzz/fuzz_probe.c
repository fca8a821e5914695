// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fuzz_probe.c - libFuzzer harness for the data-path probe's frame parser
 * (daemon/probe_frame.c), which reads whatever arrives on a vnet bridge with
 * the probe ethertype, guests' frames included. A frame it accepts must
 * encode back to the same header, and decode again to the same fields.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "daemon/probe_frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t again[PROBE_MAX_LEN];
	struct probe_frame f, g;

	if (probe_frame_decode(data, size, &f) < 0)
		return 0;
	if (f.size < PROBE_HEADER_LEN || f.size > size ||
	    (f.type != PROBE_REQUEST && f.type != PROBE_REPLY))
		__builtin_trap();
	if (probe_frame_encode(&f, again, sizeof(again)) != f.size ||
	    probe_frame_decode(again, f.size, &g) < 0 || memcmp(again, data, 16) ||
	    g.seq != f.seq || g.nonce != f.nonce || strcmp(g.cluster, f.cluster) ||
	    strcmp(g.sender, f.sender) || strcmp(g.target, f.target))
		__builtin_trap();
	return 0;
}

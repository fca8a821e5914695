// SPDX-License-Identifier: GPL-2.0-or-later
/* netlink/ifindex.c - a fresh interface index for a link about to be created (see ifindex.h). */
#include <errno.h>
#include <net/if.h>
#include <stdint.h>
#include <sys/random.h>

#include "netlink/ifindex.h"

#define IFINDEX_FLOOR 0x40000000U /* the kernel hands out small ones, counting up */
#define IFINDEX_TRIES 16

int ifindex_fresh(void)
{
	char name[IF_NAMESIZE];

	for (int i = 0; i < IFINDEX_TRIES; i++) {
		uint32_t r;

		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			return 0;
		r = IFINDEX_FLOOR | (r & (IFINDEX_FLOOR - 1));
		/* not in use now; a create with it fails with EEXIST if it is by then */
		if (!if_indextoname(r, name) && errno == ENXIO)
			return (int)r;
	}
	return 0;
}

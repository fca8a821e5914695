/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * netlink/ifindex.h - an interface index for a link fabricd is about to create.
 *
 * A create names the link, and the messages that follow it in the same
 * sendmsg (the owner mark, "up") must not name it too: when someone else
 * takes the name between fabricd's read and its create, the create fails
 * with EEXIST but a follow-up by name would mark the stranger's link as
 * fabricd's. So the create asks for an index no link has, one the kernel's
 * own allocator (which counts up from 1) does not reach, and the follow-ups
 * address that index: if the create failed, they fail with ENODEV.
 */
#ifndef FABRICD_IFINDEX_H
#define FABRICD_IFINDEX_H

/* A free ifindex in the upper half of the index space; 0 when none was found. */
int ifindex_fresh(void);

#endif

/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kinds/kind.h - what every kind of kernel object offers the engine. A kind
 * (kinds/<kind>.c) parses the kernel's object (<kind>_parse), diffs the
 * desired state against the observed one into plan ops (<kind>_plan), and
 * encodes an op into netlink messages (struct kind.encode, found through
 * kind_for_op). The messages go into a kind_encoder, which the engine backs
 * with a batch (engine/apply.c): a kind never sends, waits or resolves.
 */
#ifndef FABRICD_KIND_H
#define FABRICD_KIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/plan.h"
#include "netlink/nl.h"

struct kind_encoder {
	/* The next message, zeroed (NLM_F_REQUEST | NLM_F_ACK added); NULL when none fits. */
	struct nlmsghdr *(*msg)(struct kind_encoder *e, uint16_t type, uint16_t flags);
	/* Ends a message from msg(); its ACK is matched to the op being encoded. */
	void (*commit)(struct kind_encoder *e, struct nlmsghdr *nlh);
	/* The next n messages of at most bytes in all go to the kernel in one send. */
	void (*reserve)(struct kind_encoder *e, size_t n, size_t bytes);
	/* The ifindex of a link made earlier in this run, by name; 0 when there is none. */
	int (*ifindex)(struct kind_encoder *e, const char *name);
	/* An ifindex no link has now, for a create: 0 when none was found. */
	int (*fresh_ifindex)(struct kind_encoder *e);
	const char *owner; /* the owner mark a new link gets */
	bool ipv6;	   /* the kernel has IPv6 (booted without ipv6.disable=1) */
	char why[64];	   /* set by encode on failure, for the error message ("" if none) */
};

struct kind {
	const char *name;
	/* Encodes op into e's messages. 0, or -errno (the op failed; e->why may say why). */
	int (*encode)(struct kind_encoder *e, struct op *op);
};

/* The kind that encodes ops of type t; NULL for ops not sent as rtnetlink messages. */
const struct kind *kind_for_op(enum op_type t);

/* The kinds' encoders, one per kind (kinds/<kind>.c). */
extern const struct kind bridge_kind, vxlan_kind, link_kind, fdb_kind, ifaddr_kind;

/*
 * Ends the create message nlh and follows it, in the same send, with the
 * owner mark, no IPv6 link-local address and up (kinds/link.c). The kernel
 * ignores IFLA_IFALIAS when it creates a link, so a fabricd killed in between
 * would otherwise leave an unmarked one. The create asks for a fresh ifindex
 * and the follow-ups address that index, so a create that meets EEXIST
 * (someone took the name after fabricd's read) can never mark the other link.
 */
int link_encode_create(struct kind_encoder *e, struct op *op, struct nlmsghdr *nlh);

/* Far above what one link message takes; keeps a create and its mark together. */
#define KIND_LINK_MSG_MAX 1024

#endif
